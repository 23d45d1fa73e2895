import CKernels
import Foundation

/// A Linear layer's weight quantised to int8, one scale per output channel (symmetric,
/// max|w| / 127), packed for the int8 kernel; the bias stays fp32. Activations are quantised per
/// row when the layer runs (`Kernels.linear(_:quantized:)`), as PyTorch's dynamic quantisation does.
package struct QuantizedLinear: Sendable {
    package let inputs: Int
    package let outputs: Int
    let packed: [Int8]
    let scales: [Float]
    let columnSums: [Int32]
    let bias: [Float]?
    /// Per input channel, 1 / s_j: what the activations are multiplied by before they are
    /// quantised, the weight's column having been multiplied by s_j (SmoothQuant). The product is
    /// unchanged; the activations' outlier channels shrink and the weights' grow, so both quantise
    /// with less error.
    /// Per input channel, what the activations are multiplied by before they are quantised: 1 / s_j
    /// where the layer is smoothed (the weight's column having been multiplied by s_j, as
    /// SmoothQuant does: the product is unchanged, the activations' outlier channels shrink and the
    /// weights' grow, so both quantise with less error), and 0 for the channels kept in fp32.
    let multipliers: [Float]?
    /// Input channels whose products are computed in fp32 (their quantised weight columns are zero).
    let outliers: [Int]
    /// Their weight columns, one after the other (`outliers.count × outputs`).
    let outlierWeights: [Float]

    /// Quantises `weight` (`[out, in]`, PyTorch's layout) and keeps `bias` (`[out]`).
    ///
    /// - Parameters:
    ///   - smoothing: per input channel, the divisor of the activations (see `smoothing`).
    ///   - outliers: input channels kept in fp32 (the largest of a layer whose few huge channels
    ///     would set every token's scale: the GELU output the FFN's down projection reads).
    package init(weight: Tensor, bias: Tensor?, smoothing: [Float]? = nil, outliers: [Int] = []) {
        precondition(weight.shape.count == 2, "weight \(weight.shape) is not a matrix")
        outputs = weight.shape[0]
        inputs = weight.shape[1]
        if let bias { precondition(bias.count == outputs, "bias of \(bias.count) for \(outputs) outputs") }
        precondition(outliers.allSatisfy { (0..<weight.shape[1]).contains($0) }, "outlier channels \(outliers)")
        var weight = weight
        let columns = weight.shape[1]
        self.outliers = outliers
        outlierWeights = outliers.flatMap { channel in
            (0..<weight.shape[0]).map { weight.storage[$0 * columns + channel] }
        }
        for channel in outliers { for row in 0..<weight.shape[0] { weight.storage[row * columns + channel] = 0 } }
        if let smoothing {
            precondition(smoothing.count == weight.shape[1], "smoothing of \(smoothing.count) for \(weight.shape)")
            for index in weight.storage.indices { weight.storage[index] *= smoothing[index % columns] }
        }
        var multipliers = smoothing?.map { 1 / $0 } ?? (outliers.isEmpty ? nil : [Float](repeating: 1, count: columns))
        for channel in outliers { multipliers?[channel] = 0 }
        self.multipliers = multipliers
        var packedWeight = [Int8](repeating: 0, count: loupe_int8_packed_bytes(outputs, inputs))
        var channelScales = [Float](repeating: 0, count: outputs)
        var sums = [Int32](repeating: 0, count: outputs)
        let (n, k) = (outputs, inputs)
        weight.storage.withUnsafeBufferPointer { w in
            packedWeight.withUnsafeMutableBufferPointer { p in
                channelScales.withUnsafeMutableBufferPointer { s in
                    sums.withUnsafeMutableBufferPointer { c in
                        loupe_int8_pack_weights(n, k, w.baseAddress, p.baseAddress, s.baseAddress, c.baseAddress)
                    }
                }
            }
        }
        packed = packedWeight
        scales = channelScales
        columnSums = sums
        self.bias = bias?.storage
    }

    /// SmoothQuant's per-channel factors, `s_j = (max|x_j|)^α / (max|w_·j|)^(1−α)`, from the
    /// activations' per-channel maxima and the weight `[out, in]`.
    package static func smoothing(activationMaxima: [Float], weight: Tensor, alpha: Float = 0.5) -> [Float] {
        let columns = weight.shape[1]
        precondition(activationMaxima.count == columns, "maxima of \(activationMaxima.count) for \(weight.shape)")
        var weightMaxima = [Float](repeating: 0, count: columns)
        for (index, value) in weight.storage.enumerated() {
            weightMaxima[index % columns] = max(weightMaxima[index % columns], abs(value))
        }
        return zip(activationMaxima, weightMaxima).map { a, w in
            guard a > 0, w > 0 else { return 1 }
            return max(1e-5, Foundation.pow(a, alpha) / Foundation.pow(w, 1 - alpha))
        }
    }

    /// The forms of the int8 kernel, widest last (`loupe_int8_form`): the plain C loop, the AVX2
    /// register tile (products in int16), the AVX-512 VNNI register tile, AMX's tile registers.
    /// All four store the same bits.
    package enum Form: String, CaseIterable, Sendable {
        case portable, avx2, vnni, amx

        var level: loupe_int8_form {
            switch self {
            case .portable: LOUPE_INT8_PORTABLE
            case .avx2: LOUPE_INT8_AVX2
            case .vnni: LOUPE_INT8_VNNI
            case .amx: LOUPE_INT8_AMX
            }
        }

        init(_ form: loupe_int8_form) {
            switch form {
            case LOUPE_INT8_AMX: self = .amx
            case LOUPE_INT8_VNNI: self = .vnni
            case LOUPE_INT8_AVX2: self = .avx2
            default: self = .portable
            }
        }

        /// The form the int8 layers run in this process: the widest the CPU has, or what was set
        /// (to compare the forms on one machine), narrowed to what the CPU has.
        package static var processWidest: Form {
            get { Form(loupe_int8_widest()) }
            set { loupe_int8_set_widest(newValue.level) }
        }
    }

    /// Bytes the quantised weight takes (against 4 · inputs · outputs in fp32).
    package var weightBytes: Int { packed.count }

    /// Runs the layer on `rows` contiguous rows of `inputs` floats at `input`, writing `rows` rows
    /// of `outputs` floats at `output`: the rows quantised (smoothed first when the layer is), then
    /// the int8 kernel with the bias added as it stores.
    ///
    /// - Parameter widest: the widest form of the kernel to run, where the CPU has it (tests run
    ///   each form this CPU can; a CPU without AVX2 runs `.portable`); nil for the process's
    ///   (`Form.processWidest`).
    package func apply(
        rows: Int, input: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>, widest: Form? = nil
    ) {
        guard rows > 0 else { return }
        let stride = loupe_int8_row_bytes(inputs)
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: rows * stride) { quantized in
            withUnsafeTemporaryAllocation(of: Float.self, capacity: rows) { rowScales in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: rows) { zeros in
                    Self.withPointer(multipliers) { multipliers in
                        loupe_int8_quantize_rows(
                            rows, inputs, input, inputs, multipliers, quantized.baseAddress, stride,
                            rowScales.baseAddress, zeros.baseAddress)
                    }
                    packed.withUnsafeBufferPointer { packed in
                        scales.withUnsafeBufferPointer { scales in
                            columnSums.withUnsafeBufferPointer { sums in
                                Self.withPointer(bias) { bias in
                                    loupe_int8_linear_form(
                                        rows, outputs, inputs, quantized.baseAddress, stride, rowScales.baseAddress,
                                        zeros.baseAddress, packed.baseAddress, scales.baseAddress, sums.baseAddress,
                                        bias, output, outputs, (widest ?? Form.processWidest).level)
                                }
                            }
                        }
                    }
                }
            }
        }
        // The channels kept in fp32: their products added to what the kernel stored.
        for (slot, channel) in outliers.enumerated() {
            outlierWeights.withUnsafeBufferPointer { w in
                let column = w.baseAddress! + slot * outputs
                for row in 0..<rows {
                    let x = input[row * inputs + channel]
                    let target = output + row * outputs
                    for j in 0..<outputs { target[j] += x * column[j] }
                }
            }
        }
    }

    /// `body` with the array's base address, or nil when there is no array.
    private static func withPointer(_ values: [Float]?, _ body: (UnsafePointer<Float>?) -> Void) {
        guard let values else { return body(nil) }
        values.withUnsafeBufferPointer { body($0.baseAddress) }
    }
}

extension Kernels {
    /// `x · wᵀ + bias` through the int8 kernel: `x`'s rows quantised per row, int32 products,
    /// the result scaled back to fp32.
    package static func linear(_ x: Tensor, quantized layer: QuantizedLinear) -> Tensor {
        var result = Tensor(zeros: Array(x.shape.dropLast()) + [layer.outputs])
        linear(x, rows: 0..<x.rows, quantized: layer, into: &result, at: 0)
        return result
    }

    /// The int8 form of `linear(_:rows:weight:bias:into:at:)`: a block of `x`'s rows into the
    /// rows of `output` from `outputRow`.
    ///
    /// - Parameter widest: the widest form of the int8 kernel to run where the CPU has it (nil:
    ///   the process's).
    package static func linear(
        _ x: Tensor, rows: Range<Int>, quantized layer: QuantizedLinear, into output: inout Tensor, at outputRow: Int,
        widest: QuantizedLinear.Form? = nil
    ) {
        let inputs = x.columns
        precondition(inputs == layer.inputs, "layer takes rows of \(layer.inputs), got \(inputs)")
        precondition(
            rows.upperBound <= x.rows && output.columns == layer.outputs,
            "rows \(rows) of \(x.shape) into \(output.shape)")
        precondition(outputRow + rows.count <= output.rows, "row \(outputRow) + \(rows.count) past \(output.shape)")
        x.storage.withUnsafeBufferPointer { xp in
            output.storage.withUnsafeMutableBufferPointer { out in
                layer.apply(
                    rows: rows.count, input: xp.baseAddress! + rows.lowerBound * inputs,
                    output: out.baseAddress! + outputRow * layer.outputs, widest: widest)
            }
        }
    }
}
