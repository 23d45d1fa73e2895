import LoupeBase

/// Reads little-endian GGUF fields from a byte buffer, checking each read against the end.
///
/// Field names are autoclosures so that the 150,000 array elements of a tokenizer's metadata cost
/// no string formatting unless one of them is wrong.
struct GGUFCursor {
    let bytes: UnsafeRawBufferPointer
    /// The file's name, for errors.
    let file: String
    private(set) var offset = 0

    init(bytes: UnsafeRawBufferPointer, file: String) {
        self.bytes = bytes
        self.file = file
    }

    /// Bytes after the cursor.
    var remaining: Int { bytes.count - offset }

    /// `file: [tensor 'name': ]field at byte N: problem`, with the file's own text (keys, names,
    /// values) made terminal-safe by ``GGUFCursor/visible(_:)``.
    func error(_ field: String, at offset: Int, tensor: String? = nil, _ problem: String) -> ModelError {
        ModelError(
            file: file, tensor: tensor.map(Self.visible),
            message: "\(Self.visible(field)) at byte \(offset): \(Self.visible(problem))")
    }

    /// `text` with control characters (C0, DEL, C1) written as `\u{…}`: names and keys come from
    /// the file and reach the terminal in error messages.
    static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += "\\u{" + String(scalar.value, radix: 16) + "}"
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private func truncated(_ field: String, needs count: Int, tensor: String?) -> ModelError {
        error(
            field, at: offset, tensor: tensor,
            "needs \(count) bytes but the file ends at byte \(bytes.count) (truncated?)")
    }

    mutating func integer<T: FixedWidthInteger>(
        _ type: T.Type, _ field: @autoclosure () -> String, tensor: String? = nil
    ) throws(ModelError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw truncated(field(), needs: size, tensor: tensor) }
        let value = T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += size
        return value
    }

    /// A u64 count of things each at least `elementBytes` long.
    ///
    /// The count is not trusted: `reservation` is at most what the bytes left could hold, so no
    /// count from the file sizes an allocation beyond the file, and the reads that follow stop
    /// at the first field past the end. ``explain(_:)`` then adds what the count claimed.
    mutating func count(
        _ field: @autoclosure () -> String, elementBytes: Int, tensor: String? = nil
    ) throws(ModelError) -> GGUFCount {
        let position = offset
        let value = try integer(UInt64.self, field(), tensor: tensor)
        let fitting = remaining / elementBytes
        return GGUFCount(
            value: value, position: position, remaining: remaining, reservation: Int(min(value, UInt64(fitting))),
            fits: value <= UInt64(fitting))
    }

    /// A u64 length and that many bytes of UTF-8.
    mutating func string(_ field: @autoclosure () -> String, tensor: String? = nil) throws(ModelError) -> String {
        let start = offset
        let length = try integer(UInt64.self, field(), tensor: tensor)
        guard length <= UInt64(remaining) else {
            throw error(
                field(), at: start, tensor: tensor,
                "a string of \(length) bytes runs past the end of the file (\(remaining) bytes follow; truncated?)")
        }
        let body = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(length))])
        guard let text = String(validating: body, as: UTF8.self) else {
            throw error(field(), at: start, tensor: tensor, "the \(length)-byte string is not valid UTF-8")
        }
        offset += Int(length)
        return text
    }

    /// Arrays nested deeper than this are refused: each level costs only 12 bytes of file but a
    /// stack frame here.
    static let maximumArrayDepth = 8

    /// One value of `type`; arrays recurse.
    mutating func value(
        of type: GGUFValueType, _ field: @autoclosure () -> String, depth: Int = 0
    ) throws(ModelError) -> GGUFValue {
        switch type {
        case .uint8: return .uint8(try integer(UInt8.self, field()))
        case .int8: return .int8(try integer(Int8.self, field()))
        case .uint16: return .uint16(try integer(UInt16.self, field()))
        case .int16: return .int16(try integer(Int16.self, field()))
        case .uint32: return .uint32(try integer(UInt32.self, field()))
        case .int32: return .int32(try integer(Int32.self, field()))
        case .uint64: return .uint64(try integer(UInt64.self, field()))
        case .int64: return .int64(try integer(Int64.self, field()))
        case .float32: return .float32(Float(bitPattern: try integer(UInt32.self, field())))
        case .float64: return .float64(Double(bitPattern: try integer(UInt64.self, field())))
        case .bool:
            let start = offset
            let raw = try integer(UInt8.self, field())
            guard raw <= 1 else { throw error(field(), at: start, "bool is \(raw), not 0 or 1") }
            return .bool(raw == 1)
        case .string: return .string(try string(field()))
        case .array:
            let start = offset
            guard depth < Self.maximumArrayDepth else {
                throw error(field(), at: start, "arrays nest deeper than \(Self.maximumArrayDepth) levels")
            }
            let rawType = try integer(UInt32.self, field())
            guard let elementType = GGUFValueType(rawValue: rawType) else {
                throw error(field(), at: start, "array element type \(rawType) is not a GGUF value type (0–12)")
            }
            let count = try count(field(), elementBytes: elementType.minimumBytes)
            var elements: [GGUFValue] = []
            elements.reserveCapacity(count.reservation)
            var index: UInt64 = 0
            while index < count.value {
                do {
                    elements.append(try value(of: elementType, "\(field())[\(index)]", depth: depth + 1))
                } catch { throw count.explain(error) }
                index += 1
            }
            return .array(elements)
        }
    }

    /// Moves the cursor to `position`, which the caller has checked is within the buffer.
    mutating func seek(to position: Int) {
        precondition(position >= 0 && position <= bytes.count, "seek inside the buffer")
        offset = position
    }
}

/// A count read from the file, with what the bytes after it could hold.
struct GGUFCount {
    /// The count as the file gives it.
    let value: UInt64
    /// The byte offset of the count field.
    let position: Int
    /// Bytes after the count field.
    let remaining: Int
    /// How many elements to reserve room for: the count, capped by what the bytes left can hold.
    let reservation: Int
    /// Whether the bytes left could hold `value` elements of the smallest size.
    let fits: Bool

    /// `error`, raised reading one of the counted elements, plus what the count claimed when the
    /// file could never have held that many.
    func explain(_ error: ModelError) -> ModelError {
        guard !fits else { return error }
        var explained = error
        explained.message +=
            "; the count at byte \(position) says \(value), more than the \(remaining) bytes after it can hold"
        return explained
    }
}
