import Foundation
import LoupeBase

/// The parsed front of a GGUF file: header, metadata and tensor infos, each checked against the
/// buffer's size. Kept apart from ``GGUFFile`` so parsing needs only bytes, not a mapping.
struct GGUFHeader {
    var version: UInt32 = 0
    var alignment = GGUFFile.defaultAlignment
    var keys: [String] = []
    var metadata: [String: GGUFValue] = [:]
    var tensors: [GGUFTensorInfo] = []
    var dataOffset = 0

    /// The fewest bytes one metadata pair takes: key length, value type, a 1-byte value.
    private static let minimumPairBytes = 13
    /// The fewest bytes one tensor info takes: name length, n_dims, type, offset (no dimensions).
    private static let minimumTensorInfoBytes = 24

    /// Where each tensor's fields were, for errors found after all infos are read.
    private struct Position {
        var offset: Int
        var relativeOffset: UInt64
    }

    init(bytes: UnsafeRawBufferPointer, file: String) throws(ModelError) {
        var cursor = GGUFCursor(bytes: bytes, file: file)
        guard bytes.count >= 4 else {
            throw cursor.error("magic", at: 0, "needs 4 bytes but the file is \(bytes.count) bytes long (truncated?)")
        }
        let magic = Array(bytes[0..<4])
        guard magic == Array("GGUF".utf8) else {
            let shown = magic.map { String(format: "%02x", $0) }.joined(separator: " ")
            throw cursor.error("magic", at: 0, "is \(shown), not 'GGUF' (47 47 55 46): not a GGUF file")
        }
        cursor.seek(to: 4)
        version = try cursor.integer(UInt32.self, "version")
        guard version == 2 || version == 3 else {
            let hint = version.byteSwapped == 2 || version.byteSwapped == 3 ? " (a big-endian file?)" : ""
            throw cursor.error("version", at: 4, "is \(version); Loupe reads GGUF versions 2 and 3\(hint)")
        }
        let tensorCount = try cursor.count("tensor_count", elementBytes: Self.minimumTensorInfoBytes)
        let pairCount = try cursor.count("metadata_kv_count", elementBytes: Self.minimumPairBytes)
        try readMetadata(count: pairCount, cursor: &cursor)
        try readTensors(count: tensorCount, cursor: &cursor)
    }

    private mutating func readMetadata(count: GGUFCount, cursor: inout GGUFCursor) throws(ModelError) {
        keys.reserveCapacity(count.reservation)
        metadata.reserveCapacity(count.reservation)
        var alignmentPosition = 0
        var index: UInt64 = 0
        while index < count.value {
            defer { index += 1 }
            do { try readPair(index: index, cursor: &cursor, alignmentPosition: &alignmentPosition) } catch {
                throw count.explain(error)
            }
        }
        if let value = metadata["general.alignment"] {
            guard let alignment = value.integerValue, alignment > 0, alignment.nonzeroBitCount == 1 else {
                throw cursor.error(
                    "general.alignment", at: alignmentPosition, "is \(value) (\(value.typeName)), not a power of two")
            }
            self.alignment = alignment
        }
    }

    private mutating func readPair(
        index: UInt64, cursor: inout GGUFCursor, alignmentPosition: inout Int
    ) throws(ModelError) {
        let keyPosition = cursor.offset
        let key = try cursor.string("metadata key \(index)")
        guard metadata[key] == nil else {
            throw cursor.error("metadata key \(index)", at: keyPosition, "'\(key)' appears twice")
        }
        let typePosition = cursor.offset
        let rawType = try cursor.integer(UInt32.self, "\(key) value type")
        guard let type = GGUFValueType(rawValue: rawType) else {
            throw cursor.error("\(key) value type", at: typePosition, "\(rawType) is not a GGUF value type (0–12)")
        }
        if key == "general.alignment" { alignmentPosition = cursor.offset }
        metadata[key] = try cursor.value(of: type, key)
        keys.append(key)
    }

    private mutating func readTensors(count: GGUFCount, cursor: inout GGUFCursor) throws(ModelError) {
        var positions: [Position] = []
        positions.reserveCapacity(count.reservation)
        tensors.reserveCapacity(count.reservation)
        var names = Set<String>()
        var index: UInt64 = 0
        while index < count.value {
            defer { index += 1 }
            do { positions.append(try readTensorInfo(index: index, names: &names, cursor: &cursor)) } catch {
                throw count.explain(error)
            }
        }
        try placeData(positions: positions, cursor: cursor)
    }

    /// Reads one tensor info, appends it to `tensors` (offset still relative) and says where its
    /// fields were.
    private mutating func readTensorInfo(
        index: UInt64, names: inout Set<String>, cursor: inout GGUFCursor
    ) throws(ModelError) -> Position {
        let namePosition = cursor.offset
        let name = try cursor.string("tensor \(index) name")
        guard names.insert(name).inserted else {
            throw cursor.error("tensor \(index) name", at: namePosition, tensor: name, "appears twice")
        }
        let dimensionsPosition = cursor.offset
        let dimensionCount = try cursor.integer(UInt32.self, "n_dims", tensor: name)
        guard dimensionCount >= 1, dimensionCount <= GGUFFile.maximumDimensions else {
            throw cursor.error(
                "n_dims", at: dimensionsPosition, tensor: name,
                "is \(dimensionCount); ggml tensors have 1 to \(GGUFFile.maximumDimensions) dimensions")
        }
        var dimensions: [Int] = []
        var elementCount = 1
        for axis in 0..<Int(dimensionCount) {
            let position = cursor.offset
            let raw = try cursor.integer(UInt64.self, "dimension \(axis)", tensor: name)
            guard raw >= 1, let dimension = Int(exactly: raw) else {
                throw cursor.error(
                    "dimension \(axis)", at: position, tensor: name, "is \(raw); dimensions are 1 to \(Int.max)")
            }
            let product = elementCount.multipliedReportingOverflow(by: dimension)
            guard !product.overflow else {
                throw cursor.error(
                    "dimension \(axis)", at: position, tensor: name,
                    "\(dimensions + [dimension]) has more elements than a 64-bit count holds")
            }
            dimensions.append(dimension)
            elementCount = product.partialValue
        }
        let typePosition = cursor.offset
        let rawType = try cursor.integer(UInt32.self, "type", tensor: name)
        guard let type = GGMLType(rawValue: rawType) else {
            throw cursor.error("type", at: typePosition, tensor: name, "\(rawType) is not a ggml tensor type")
        }
        guard dimensions[0] % type.blockSize == 0 else {
            throw cursor.error(
                "dimension 0", at: dimensionsPosition + 4, tensor: name,
                "is \(dimensions[0]), not a multiple of \(type.name)'s block of \(type.blockSize)")
        }
        let blocks = elementCount / type.blockSize
        let byteCount = blocks.multipliedReportingOverflow(by: type.bytesPerBlock)
        guard !byteCount.overflow else {
            throw cursor.error(
                "dimensions", at: dimensionsPosition, tensor: name,
                "\(type.name) \(dimensions) needs more bytes than a 64-bit size holds")
        }
        let offsetPosition = cursor.offset
        let relativeOffset = try cursor.integer(UInt64.self, "offset", tensor: name)
        guard relativeOffset % UInt64(alignment) == 0 else {
            throw cursor.error(
                "offset", at: offsetPosition, tensor: name,
                "\(relativeOffset) is not a multiple of the alignment \(alignment)")
        }
        tensors.append(
            GGUFTensorInfo(
                name: name, dimensions: dimensions, type: type, offset: 0, byteCount: byteCount.partialValue,
                elementCount: elementCount))
        return Position(offset: offsetPosition, relativeOffset: relativeOffset)
    }

    /// Sets `dataOffset` and each tensor's absolute offset, checking that every tensor's bytes lie
    /// inside the file and that no two overlap.
    private mutating func placeData(positions: [Position], cursor: GGUFCursor) throws(ModelError) {
        let end = cursor.offset
        // end ≤ buffer size, so rounding up by less than `alignment` cannot overflow.
        dataOffset = (end + alignment - 1) / alignment * alignment
        let fileSize = cursor.bytes.count
        for index in tensors.indices {
            let tensor = tensors[index]
            let position = positions[index]
            let available = fileSize - min(dataOffset, fileSize)
            guard position.relativeOffset <= UInt64(available),
                Int(position.relativeOffset) <= available - tensor.byteCount
            else {
                throw cursor.error(
                    "offset", at: position.offset, tensor: tensor.name,
                    "data at \(position.relativeOffset) + \(tensor.byteCount) bytes (\(tensor.type.name) "
                        + "\(tensor.dimensions)) runs past the end of the \(available) data bytes from byte "
                        + "\(dataOffset) (truncated?)")
            }
            tensors[index] = GGUFTensorInfo(
                name: tensor.name, dimensions: tensor.dimensions, type: tensor.type,
                offset: dataOffset + Int(position.relativeOffset), byteCount: tensor.byteCount,
                elementCount: tensor.elementCount)
        }
        let order = tensors.indices.sorted { tensors[$0].offset < tensors[$1].offset }
        for (previous, next) in zip(order, order.dropFirst())
        where tensors[previous].offset + tensors[previous].byteCount > tensors[next].offset {
            throw cursor.error(
                "offset", at: positions[next].offset, tensor: tensors[next].name,
                "its bytes overlap those of '\(tensors[previous].name)'")
        }
    }
}
