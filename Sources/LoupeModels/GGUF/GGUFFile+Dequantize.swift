extension GGUFFile {
    /// The tensor dequantized to float32, row-major `[rows][dimensions[0]]`.
    ///
    /// - Throws: ``ModelError`` naming the tensor when its type is not F32, F16, BF16, Q8_0, Q4_0
    ///   or Q4_1.
    package func floats(_ tensor: GGUFTensorInfo) throws(ModelError) -> [Float] {
        try validateSupported(tensor)
        let width = tensor.dimensions[0]
        return [Float](unsafeUninitializedCapacity: tensor.elementCount) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            for row in 0..<tensor.rows { dequantizeRow(tensor, row: row, into: base + row * width) }
            initialized = tensor.elementCount
        }
    }

    /// Row `row` of `tensor` dequantized into `into`, which has room for `dimensions[0]` floats.
    ///
    /// The tensor's type must be supported (``validateSupported(_:)``) and `row` in `0..<rows`.
    package func dequantizeRow(_ tensor: GGUFTensorInfo, row: Int, into destination: UnsafeMutablePointer<Float>) {
        precondition(tensor.type.isSupported, "\(tensor.name) is \(tensor.type.name): call validateSupported first")
        precondition(row >= 0 && row < tensor.rows, "row \(row) of \(tensor.name), which has \(tensor.rows)")
        let rowBytes = tensor.bytesPerRow
        let source = UnsafeRawBufferPointer(rebasing: bytes(tensor)[(row * rowBytes)..<((row + 1) * rowBytes)])
        GGMLDequantization.dequantize(tensor.type, source, count: tensor.dimensions[0], into: destination)
    }
}

/// ggml's reference dequantization of the block types Loupe reads, in portable Swift.
///
/// Each block of 32 weights: Q8_0 is an fp16 scale `d` and 32 int8 (w = q·d); Q4_0 is `d` and 16
/// bytes of nibbles (w = (q − 8)·d); Q4_1 is `d`, an fp16 minimum `m` and 16 bytes of nibbles
/// (w = q·d + m). Byte j of the nibbles holds weight j in its low half and weight j + 16 in its
/// high half. The arithmetic is float32 in the order of ggml's `dequantize_row_*` (and gguf-py's
/// `dequantize`), so results match them exactly.
package enum GGMLDequantization {
    /// Dequantizes `count` elements of `type` from `source` (exactly their bytes) into `destination`.
    package static func dequantize(
        _ type: GGMLType, _ source: UnsafeRawBufferPointer, count: Int, into destination: UnsafeMutablePointer<Float>
    ) {
        precondition(count % type.blockSize == 0, "\(count) elements of \(type.name) are not whole blocks")
        precondition(source.count == count / type.blockSize * type.bytesPerBlock, "\(type.name) source size")
        switch type {
        case .f32:
            for index in 0..<count {
                destination[index] = Float(
                    bitPattern: UInt32(littleEndian: source.loadUnaligned(fromByteOffset: index * 4, as: UInt32.self)))
            }
        case .f16:
            for index in 0..<count {
                destination[index] = half(source, at: index * 2)
            }
        case .bf16:
            for index in 0..<count {
                let bits = UInt16(littleEndian: source.loadUnaligned(fromByteOffset: index * 2, as: UInt16.self))
                destination[index] = Float(bitPattern: UInt32(bits) << 16)
            }
        case .q8_0:
            for block in 0..<(count / 32) {
                let start = block * 34
                let scale = half(source, at: start)
                for index in 0..<32 {
                    destination[block * 32 + index] = Float(Int8(bitPattern: source[start + 2 + index])) * scale
                }
            }
        case .q4_0:
            for block in 0..<(count / 32) {
                let start = block * 18
                let scale = half(source, at: start)
                let output = destination + block * 32
                for index in 0..<16 {
                    let byte = source[start + 2 + index]
                    output[index] = Float(Int(byte & 0x0F) - 8) * scale
                    output[index + 16] = Float(Int(byte >> 4) - 8) * scale
                }
            }
        case .q4_1:
            for block in 0..<(count / 32) {
                let start = block * 20
                let scale = half(source, at: start)
                let minimum = half(source, at: start + 2)
                let output = destination + block * 32
                for index in 0..<16 {
                    let byte = source[start + 4 + index]
                    output[index] = Float(byte & 0x0F) * scale + minimum
                    output[index + 16] = Float(byte >> 4) * scale + minimum
                }
            }
        default:
            preconditionFailure("\(type.name) is not dequantized by Loupe")
        }
    }

    /// The little-endian fp16 at `offset`, widened exactly.
    @inline(__always)
    private static func half(_ source: UnsafeRawBufferPointer, at offset: Int) -> Float {
        SafeTensors.halfToFloat(UInt16(littleEndian: source.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    }
}
