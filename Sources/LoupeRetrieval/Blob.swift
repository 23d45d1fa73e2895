import Foundation

/// Little-endian fixed-width integers into a BLOB, for the indexes the workspace stores.
struct BlobWriter {
    private(set) var data = Data()

    mutating func put<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    mutating func append(_ bytes: [UInt8]) { data.append(contentsOf: bytes) }
}

/// Reads what a ``BlobWriter`` wrote; every read is nil past the end, so a truncated BLOB is
/// refused rather than trusted.
struct BlobReader {
    private let data: Data
    private var offset: Data.Index

    init(_ data: Data) {
        self.data = data
        offset = data.startIndex
    }

    var remaining: Int { data.endIndex - offset }
    var atEnd: Bool { offset == data.endIndex }

    mutating func take<T: FixedWidthInteger>(_ type: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard offset + size <= data.endIndex else { return nil }
        var value: T = 0
        _ = withUnsafeMutableBytes(of: &value) { data.copyBytes(to: $0, from: offset..<(offset + size)) }
        offset += size
        return T(littleEndian: value)
    }

    mutating func bytes(_ count: Int) -> Data? {
        guard count <= remaining else { return nil }
        defer { offset += count }
        return data[offset..<(offset + count)]
    }
}
