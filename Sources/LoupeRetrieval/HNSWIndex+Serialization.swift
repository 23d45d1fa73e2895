import Foundation

extension HNSWIndex {
    private static let magic: UInt32 = 0x4C_48_4E_32  // "LHN2"

    /// The whole index as a BLOB, so it can grow and lose nodes later without the data it was
    /// built from: magic, dimensions, M, efConstruction, efSearch, the level generator's state,
    /// node count, entry point; per node its deleted flag, label, level count and each level's
    /// links; then the vectors.
    package func serialized() -> Data {
        var blob = BlobWriter()
        blob.put(Self.magic)
        blob.put(UInt32(dimensions))
        blob.put(UInt32(parameters.m))
        blob.put(UInt32(parameters.efConstruction))
        blob.put(UInt32(parameters.efSearch))
        blob.put(random)
        blob.put(UInt32(count))
        blob.put(entryPoint)
        for node in 0..<count {
            blob.put(UInt8(deleted[node] ? 1 : 0))
            blob.put(labels[node])
            let levels = self.levels(of: node)
            blob.put(UInt8(levels.count))
            for level in levels {
                blob.put(UInt16(level.count))
                for neighbour in level { blob.put(neighbour) }
            }
        }
        blob.put(vectors)
        return blob.data
    }

    /// Reads an index back; nil when the BLOB is not shaped as it claims or its vectors are not
    /// `dimensions` wide.
    package init?(serialized data: Data, dimensions: Int) {
        var blob = BlobReader(data)
        guard blob.take(UInt32.self) == Self.magic, let dims = blob.take(UInt32.self), Int(dims) == dimensions,
            let m = blob.take(UInt32.self), let efc = blob.take(UInt32.self), let efs = blob.take(UInt32.self),
            let random = blob.take(UInt64.self), random != 0,
            let count = blob.take(UInt32.self), let entry = blob.take(Int32.self),
            // Node numbers are Int32: a count past that is damage, and `Int32(count)` would trap.
            count <= Int32.max, entry >= -1, Int(entry) < Int(count), (entry >= 0) == (count > 0),
            // Each node takes at least 10 bytes, so a count the BLOB cannot hold is refused
            // before reserving memory for it.
            Int(count) * 10 <= blob.remaining,
            // A level is drawn as -log(u) / log(m): m < 2 divides by zero (or less).
            m >= 2, efc >= 1, efs >= 1, m <= 1 << 16, efc <= 1 << 24, efs <= 1 << 24
        else { return nil }
        var links: [[[Int32]]] = []
        var deleted: [Bool] = []
        var labels: [Int64] = []
        links.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let flag = blob.take(UInt8.self), flag <= 1, let label = blob.take(Int64.self),
                let levels = blob.take(UInt8.self), levels > 0
            else { return nil }
            deleted.append(flag == 1)
            labels.append(label)
            var node: [[Int32]] = []
            for _ in 0..<levels {
                guard let size = blob.take(UInt16.self) else { return nil }
                var level: [Int32] = []
                for _ in 0..<size {
                    guard let neighbour = blob.take(Int32.self), neighbour >= 0, Int(neighbour) < Int(count) else {
                        return nil
                    }
                    level.append(neighbour)
                }
                node.append(level)
            }
            links.append(node)
        }
        // A search walks a neighbour's links at the same level: each must have that level.
        for node in links {
            for (level, neighbours) in node.enumerated()
            where neighbours.contains(where: { links[Int($0)].count <= level }) {
                return nil
            }
        }
        guard let vectors = blob.floats(Int(count) * dimensions), blob.atEnd else { return nil }
        self.init(
            dimensions: dimensions, parameters: Parameters(m: Int(m), efConstruction: Int(efc), efSearch: Int(efs)),
            vectors: vectors, links: links, deleted: deleted, labels: labels, entryPoint: entry, random: random)
    }
}
