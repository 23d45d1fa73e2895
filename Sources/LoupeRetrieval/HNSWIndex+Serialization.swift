import Foundation

extension HNSWIndex {
    private static let magic: UInt32 = 0x4C_48_4E_31  // "LHN1"

    /// The graph as a BLOB (the vectors live with their chunks): magic, dimensions, M,
    /// efConstruction, efSearch, entry point, then per node its deleted flag, level count and
    /// each level's links.
    package func serializedGraph() -> Data {
        var blob = BlobWriter()
        blob.put(Self.magic)
        blob.put(UInt32(dimensions))
        blob.put(UInt32(parameters.m))
        blob.put(UInt32(parameters.efConstruction))
        blob.put(UInt32(parameters.efSearch))
        blob.put(UInt32(count))
        blob.put(entryPoint)
        for node in 0..<count {
            blob.put(UInt8(deleted[node] ? 1 : 0))
            blob.put(UInt8(links[node].count))
            for level in links[node] {
                blob.put(UInt16(level.count))
                for neighbour in level { blob.put(neighbour) }
            }
        }
        return blob.data
    }

    /// Rebuilds the index from a BLOB and the vectors it was built on (rows of `dimensions`, in
    /// node order); nil when the BLOB is not shaped as it claims or does not fit the vectors.
    package init?(serializedGraph data: Data, vectors: [Float], dimensions: Int) {
        var blob = BlobReader(data)
        guard blob.take(UInt32.self) == Self.magic, let dims = blob.take(UInt32.self), Int(dims) == dimensions,
            let m = blob.take(UInt32.self), let efc = blob.take(UInt32.self), let efs = blob.take(UInt32.self),
            let count = blob.take(UInt32.self), Int(count) * dimensions == vectors.count,
            let entry = blob.take(Int32.self),
            entry >= -1, entry < Int32(count)
        else { return nil }
        var links: [[[Int32]]] = []
        var deleted: [Bool] = []
        links.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let flag = blob.take(UInt8.self), let levels = blob.take(UInt8.self), levels > 0 else { return nil }
            deleted.append(flag == 1)
            var node: [[Int32]] = []
            for _ in 0..<levels {
                guard let size = blob.take(UInt16.self) else { return nil }
                var level: [Int32] = []
                for _ in 0..<size {
                    guard let neighbour = blob.take(Int32.self), neighbour >= 0, neighbour < Int32(count) else {
                        return nil
                    }
                    level.append(neighbour)
                }
                node.append(level)
            }
            links.append(node)
        }
        guard blob.atEnd else { return nil }
        self.init(
            dimensions: dimensions, parameters: Parameters(m: Int(m), efConstruction: Int(efc), efSearch: Int(efs)),
            vectors: vectors, links: links, deleted: deleted, entryPoint: entry)
    }
}
