import Foundation
import LoupeBase
import LoupeTensor

/// A `.safetensors` file: an 8-byte little-endian header length, a JSON header naming each
/// tensor's dtype, shape and byte range, then the raw data.
///
/// The file is memory-mapped; tensors are converted to Float32 when asked for. The header is
/// validated when the file is opened: every range inside the data, no overlaps, each range's
/// length equal to its shape times its dtype's size.
package struct SafeTensors: Sendable {
    /// The element types Loupe reads.
    package enum DType: String, Sendable {
        case f32 = "F32"
        case f16 = "F16"
        case bf16 = "BF16"
        case i64 = "I64"
        case i32 = "I32"

        package var size: Int {
            switch self {
            case .f32, .i32: return 4
            case .f16, .bf16: return 2
            case .i64: return 8
            }
        }
    }

    /// One tensor's header entry.
    package struct Entry: Hashable, Sendable {
        package var dtype: DType
        package var shape: [Int]
        package var range: Range<Int>
    }

    package let path: String
    package let entries: [String: Entry]
    private let data: Data
    private let dataStart: Int

    /// Opens and validates `path`.
    ///
    /// - Throws: ``ModelError`` naming the file (and tensor) for a missing or truncated file,
    ///   a bad header, an unknown dtype, or a byte range that does not match its shape.
    package init(path: String) throws(ModelError) {
        let name = (path as NSString).lastPathComponent
        self.path = path
        let size: Int
        do { size = try TextFile.readableSize(path) } catch { throw ModelError(reading: error) }
        // Too short files are refused before mapping (Foundation cannot map an empty file).
        guard size >= 8 else {
            throw ModelError(file: name, message: "is \(size) bytes, too short for a safetensors header")
        }
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped)
        } catch {
            throw ModelError(file: name, message: "cannot be mapped into memory (\(error.localizedDescription))")
        }
        guard data.count >= 8 else {
            throw ModelError(file: name, message: "is \(data.count) bytes, too short for a safetensors header")
        }
        let headerLength = data.prefix(8).enumerated().reduce(UInt64(0)) {
            $0 | UInt64($1.element) << (8 * UInt64($1.offset))
        }
        guard headerLength <= UInt64(data.count - 8), headerLength <= 100_000_000 else {
            throw ModelError(
                file: name,
                message: "header length \(headerLength) runs past the end of the \(data.count)-byte file (truncated?)")
        }
        dataStart = 8 + Int(headerLength)
        let header = data.subdata(in: 8..<dataStart)
        guard let json = try? JSONSerialization.jsonObject(with: header) as? [String: Any] else {
            throw ModelError(file: name, message: "header is not a JSON object")
        }
        let dataLength = data.count - dataStart
        var entries: [String: Entry] = [:]
        for (key, value) in json where key != "__metadata__" {
            guard let fields = value as? [String: Any] else {
                throw ModelError(file: name, tensor: key, message: "header entry is not an object")
            }
            guard let dtypeField = fields["dtype"] else {
                throw ModelError(file: name, tensor: key, message: "has no dtype")
            }
            guard let dtypeName = dtypeField as? String else {
                throw ModelError(
                    file: name, tensor: key,
                    message: "dtype \(dtypeField) is not a string (F32, F16, BF16, I32, I64 are read)")
            }
            guard let dtype = DType(rawValue: dtypeName) else {
                throw ModelError(
                    file: name, tensor: key,
                    message: "dtype \(dtypeName) is not supported (F32, F16, BF16, I32, I64 are)")
            }
            // `as? Int` bridges only numbers that are exactly an Int: 2.5 and 1e300 fail instead
            // of truncating or trapping the way `intValue` does.
            guard let shape = (fields["shape"] as? [Any])?.compactMap({ SafeTensors.wholeNumber($0) }),
                shape.allSatisfy({ $0 >= 0 }),
                (fields["shape"] as? [Any])?.count == shape.count
            else { throw ModelError(file: name, tensor: key, message: "shape is not a list of non-negative integers") }
            guard let offsets = (fields["data_offsets"] as? [Any])?.compactMap({ SafeTensors.wholeNumber($0) }),
                offsets.count == 2,
                offsets[0] >= 0, offsets[0] <= offsets[1]
            else { throw ModelError(file: name, tensor: key, message: "data_offsets is not [begin, end]") }
            guard offsets[1] <= dataLength else {
                throw ModelError(
                    file: name, tensor: key,
                    message: "data ends at byte \(offsets[1]) but the file holds \(dataLength) data bytes (truncated?)")
            }
            let expected: Int
            do {
                expected = try CheckedNumber.product(
                    CheckedNumber.product(of: shape, field: "shape"), dtype.size, field: "shape × \(dtypeName) size")
            } catch {
                throw ModelError(file: name, tensor: key, message: error.message)
            }
            guard offsets[1] - offsets[0] == expected else {
                throw ModelError(
                    file: name, tensor: key,
                    message:
                        "\(dtypeName) \(shape) needs \(expected) bytes, the header gives \(offsets[1] - offsets[0])")
            }
            entries[key] = Entry(dtype: dtype, shape: shape, range: offsets[0]..<offsets[1])
        }
        let sorted = entries.sorted { $0.value.range.lowerBound < $1.value.range.lowerBound }
        for (previous, next) in zip(sorted, sorted.dropFirst())
        where previous.value.range.upperBound > next.value.range.lowerBound {
            throw ModelError(file: name, tensor: next.key, message: "its bytes overlap those of '\(previous.key)'")
        }
        self.entries = entries
    }

    /// The tensor called `name` as Float32 (F16 and BF16 are widened).
    ///
    /// - Parameter shape: when given, the tensor must have exactly this shape.
    package func tensor(_ name: String, shape expected: [Int]? = nil) throws(ModelError) -> Tensor {
        let file = (path as NSString).lastPathComponent
        guard let entry = entries[name] else { throw ModelError(file: file, tensor: name, message: "is missing") }
        if let expected, expected != entry.shape {
            throw ModelError(file: file, tensor: name, message: "has shape \(entry.shape), expected \(expected)")
        }
        let count = entry.shape.reduce(1, *)
        var values = [Float](repeating: 0, count: count)
        let start = dataStart + entry.range.lowerBound
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[start..<(start + entry.range.count)])
            switch entry.dtype {
            case .f32:
                for index in 0..<count {
                    values[index] = Float(
                        bitPattern: bytes.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self).littleEndian)
                }
            case .f16:
                for index in 0..<count {
                    values[index] = SafeTensors.halfToFloat(
                        bytes.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self).littleEndian)
                }
            case .bf16:
                for index in 0..<count {
                    values[index] = Float(
                        bitPattern: UInt32(bytes.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self).littleEndian)
                            << 16)
                }
            case .i32:
                for index in 0..<count {
                    values[index] = Float(
                        Int32(bitPattern: bytes.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self).littleEndian))
                }
            case .i64:
                for index in 0..<count {
                    values[index] = Float(
                        Int64(bitPattern: bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self).littleEndian))
                }
            }
        }
        return Tensor(shape: entry.shape, storage: values)
    }

    /// A JSON number that is exactly an integer (not 2.5, not 1e300), else nil.
    private static func wholeNumber(_ value: Any) -> Int? { value as? Int }

    /// IEEE 754 half precision to single precision, subnormals, infinities and NaN included.
    static func halfToFloat(_ half: UInt16) -> Float {
        let sign = UInt32(half & 0x8000) << 16
        let exponent = UInt32(half >> 10 & 0x1F)
        let mantissa = UInt32(half & 0x3FF)
        if exponent == 0x1F { return Float(bitPattern: sign | 0x7F80_0000 | mantissa << 13) }
        if exponent == 0 {
            // Zero or subnormal: exactly mantissa × 2⁻²⁴.
            let magnitude = Float(mantissa) * 0x1p-24
            return sign == 0 ? magnitude : -magnitude
        }
        return Float(bitPattern: sign | (exponent + 112) << 23 | mantissa << 13)
    }
}
