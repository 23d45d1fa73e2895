import Foundation

/// Little-endian fixed-width integers into a BLOB, for the indexes the workspace stores.
struct BlobWriter {
    private(set) var data = Data()

    mutating func put<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    mutating func append(_ bytes: [UInt8]) { data.append(contentsOf: bytes) }

    /// IEEE 754 single floats, little-endian, in one copy.
    mutating func put(_ values: [Float]) {
        values.withUnsafeBytes { raw in
            guard (1 as UInt16).littleEndian != 1 else { return data.append(contentsOf: raw) }
            for value in values { put(value.bitPattern) }
        }
    }
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

    /// `count` floats written by ``BlobWriter/put(_:)-([Float])``; nil when fewer remain.
    mutating func floats(_ count: Int) -> [Float]? {
        guard let raw = bytes(count * MemoryLayout<Float>.size) else { return nil }
        var values = [Float](repeating: 0, count: count)
        values.withUnsafeMutableBytes { _ = raw.copyBytes(to: $0) }
        if (1 as UInt16).littleEndian != 1 {
            values = values.map { Float(bitPattern: UInt32(littleEndian: $0.bitPattern)) }
        }
        return values
    }

    mutating func bytes(_ count: Int) -> Data? {
        guard count <= remaining else { return nil }
        defer { offset += count }
        return data[offset..<(offset + count)]
    }
}
