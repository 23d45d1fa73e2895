import Foundation

extension BM25Index {
    private static let magic: UInt32 = 0x4C_42_4D_31  // "LBM1"

    /// The index as a BLOB: magic, k1, b, document lengths, then each term with its postings.
    package func serialized() -> Data {
        var blob = BlobWriter()
        blob.put(Self.magic)
        blob.put(parameters.k1.bitPattern)
        blob.put(parameters.b.bitPattern)
        blob.put(UInt32(lengths.count))
        for length in lengths { blob.put(length) }
        blob.put(UInt32(postings.count))
        for term in postings.keys.sorted() {
            let bytes = Array(term.utf8)
            blob.put(UInt16(bytes.count))
            blob.append(bytes)
            let list = postings[term]!
            blob.put(UInt32(list.count))
            for (document, frequency) in list {
                blob.put(document)
                blob.put(frequency)
            }
        }
        return blob.data
    }

    /// Reads a BLOB written by ``serialized()``; nil when it does not have the shape it claims
    /// (truncated, wrong magic, postings pointing past the documents or out of order), so the caller rebuilds.
    package init?(serialized data: Data) {
        var blob = BlobReader(data)
        guard blob.take(UInt32.self) == Self.magic, let k1 = blob.take(UInt64.self), let b = blob.take(UInt64.self),
            let documentCount = blob.take(UInt32.self), Int(documentCount) * 4 <= data.count
        else { return nil }
        var lengths: [Int32] = []
        lengths.reserveCapacity(Int(documentCount))
        for _ in 0..<documentCount {
            guard let length = blob.take(Int32.self), length >= 0 else { return nil }
            lengths.append(length)
        }
        guard let termCount = blob.take(UInt32.self) else { return nil }
        var postings: [String: [(document: Int32, frequency: Int32)]] = [:]
        for _ in 0..<termCount {
            guard let size = blob.take(UInt16.self), let bytes = blob.bytes(Int(size)) else { return nil }
            let term = String(decoding: bytes, as: UTF8.self)
            guard let count = blob.take(UInt32.self), Int(count) * 8 <= blob.remaining else { return nil }
            var list: [(document: Int32, frequency: Int32)] = []
            list.reserveCapacity(Int(count))
            for _ in 0..<count {
                // A list's documents ascend (search and explain walk them in order).
                guard let document = blob.take(Int32.self), let frequency = blob.take(Int32.self),
                    document > list.last?.document ?? -1, Int(document) < lengths.count, frequency > 0
                else { return nil }
                list.append((document, frequency))
            }
            postings[term] = list
        }
        guard blob.atEnd else { return nil }
        self.init(
            postings: postings, lengths: lengths,
            parameters: Parameters(k1: Double(bitPattern: k1), b: Double(bitPattern: b)))
    }
}
