import Foundation

extension HNSWIndex {
    private static let magic: UInt32 = 0x4C_48_4E_31  // "LHN1"

    /// The graph as a BLOB (the vectors live with their chunks): magic, dimensions, M,
    /// efConstruction, efSearch, entry point, then per node its deleted flag, level count and
    /// each level's links.
    package func serializedGraph() -> Data {
        var data = Data()
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        put(Self.magic)
        put(UInt32(dimensions))
        put(UInt32(parameters.m))
        put(UInt32(parameters.efConstruction))
        put(UInt32(parameters.efSearch))
        put(UInt32(count))
        put(entryPoint)
        for node in 0..<count {
            put(UInt8(deleted[node] ? 1 : 0))
            put(UInt8(links[node].count))
            for level in links[node] {
                put(UInt16(level.count))
                for neighbour in level { put(neighbour) }
            }
        }
        return data
    }

    /// Rebuilds the index from a BLOB and the vectors it was built on (rows of `dimensions`, in
    /// node order); nil when the BLOB is not shaped as it claims or does not fit the vectors.
    package init?(serializedGraph data: Data, vectors: [Float], dimensions: Int) {
        var offset = data.startIndex
        func take<T: FixedWidthInteger>(_ type: T.Type) -> T? {
            let size = MemoryLayout<T>.size
            guard offset + size <= data.endIndex else { return nil }
            var value: T = 0
            _ = withUnsafeMutableBytes(of: &value) { data.copyBytes(to: $0, from: offset..<(offset + size)) }
            offset += size
            return T(littleEndian: value)
        }
        guard take(UInt32.self) == Self.magic, let dims = take(UInt32.self), Int(dims) == dimensions,
            let m = take(UInt32.self), let efc = take(UInt32.self), let efs = take(UInt32.self),
            let count = take(UInt32.self), Int(count) * dimensions == vectors.count, let entry = take(Int32.self),
            entry >= -1, entry < Int32(count)
        else { return nil }
        var links: [[[Int32]]] = []
        var deleted: [Bool] = []
        links.reserveCapacity(Int(count))
        for _ in 0..<count {
            guard let flag = take(UInt8.self), let levels = take(UInt8.self), levels > 0 else { return nil }
            deleted.append(flag == 1)
            var node: [[Int32]] = []
            for _ in 0..<levels {
                guard let size = take(UInt16.self) else { return nil }
                var level: [Int32] = []
                for _ in 0..<size {
                    guard let neighbour = take(Int32.self), neighbour >= 0, neighbour < Int32(count) else { return nil }
                    level.append(neighbour)
                }
                node.append(level)
            }
            links.append(node)
        }
        guard offset == data.endIndex else { return nil }
        self.init(
            dimensions: dimensions, parameters: Parameters(m: Int(m), efConstruction: Int(efc), efSearch: Int(efs)),
            vectors: vectors, links: links, deleted: deleted, entryPoint: entry)
    }
}
