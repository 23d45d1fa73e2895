import Foundation

extension BM25Index {
    private static let magic: UInt32 = 0x4C_42_4D_31  // "LBM1"

    /// The index as a BLOB: magic, k1, b, document lengths, then each term with its postings.
    package func serialized() -> Data {
        var data = Data()
        func put<T: FixedWidthInteger>(_ value: T) {
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        put(Self.magic)
        put(parameters.k1.bitPattern)
        put(parameters.b.bitPattern)
        put(UInt32(lengths.count))
        for length in lengths { put(length) }
        put(UInt32(postings.count))
        for term in postings.keys.sorted() {
            let bytes = Array(term.utf8)
            put(UInt16(bytes.count))
            data.append(contentsOf: bytes)
            let list = postings[term]!
            put(UInt32(list.count))
            for (document, frequency) in list {
                put(document)
                put(frequency)
            }
        }
        return data
    }

    /// Reads a BLOB written by ``serialized()``; nil when it does not have the shape it claims
    /// (truncated, wrong magic, postings pointing past the documents), so the caller rebuilds.
    package init?(serialized data: Data) {
        var offset = 0
        func take<T: FixedWidthInteger>(_ type: T.Type) -> T? {
            let size = MemoryLayout<T>.size
            guard offset + size <= data.count else { return nil }
            var value: T = 0
            _ = withUnsafeMutableBytes(of: &value) {
                data.copyBytes(to: $0, from: (data.startIndex + offset)..<(data.startIndex + offset + size))
            }
            offset += size
            return T(littleEndian: value)
        }
        guard take(UInt32.self) == Self.magic, let k1 = take(UInt64.self), let b = take(UInt64.self),
            let documentCount = take(UInt32.self), Int(documentCount) * 4 <= data.count
        else { return nil }
        var lengths: [Int32] = []
        lengths.reserveCapacity(Int(documentCount))
        for _ in 0..<documentCount {
            guard let length = take(Int32.self), length >= 0 else { return nil }
            lengths.append(length)
        }
        guard let termCount = take(UInt32.self) else { return nil }
        var postings: [String: [(document: Int32, frequency: Int32)]] = [:]
        for _ in 0..<termCount {
            guard let size = take(UInt16.self), offset + Int(size) <= data.count else { return nil }
            let term = String(
                decoding: data[(data.startIndex + offset)..<(data.startIndex + offset + Int(size))], as: UTF8.self)
            offset += Int(size)
            guard let count = take(UInt32.self), Int(count) * 8 <= data.count - offset else { return nil }
            var list: [(document: Int32, frequency: Int32)] = []
            list.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let document = take(Int32.self), let frequency = take(Int32.self), document >= 0,
                    Int(document) < lengths.count, frequency > 0
                else { return nil }
                list.append((document, frequency))
            }
            postings[term] = list
        }
        guard offset == data.count else { return nil }
        self.init(
            postings: postings, lengths: lengths,
            parameters: Parameters(k1: Double(bitPattern: k1), b: Double(bitPattern: b)))
    }
}
