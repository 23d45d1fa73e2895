import Foundation
import LoupeBase
import LoupeTensor

/// A BERT encoder (post-LayerNorm, exact GELU, absolute positions) with weights from a
/// safetensors file, as sentence-transformers' all-MiniLM-L6-v2 ships it.
///
/// A batch is padded to its longest sequence and every matrix product goes through one
/// OpenBLAS sgemm over the whole batch; attention runs per sequence and head on strided
/// sub-matrices, with padded keys masked out.
package struct BertEncoder: Sendable {
    package let configuration: BertConfiguration
    let wordEmbeddings: Tensor
    let positionEmbeddings: Tensor
    let typeEmbeddings: Tensor
    let embeddingNorm: (gamma: Tensor, beta: Tensor)
    private(set) var layers: [Layer]
    /// The linear layers' precision: fp32, or int8 after `quantized()`.
    package var precision: Precision { layers.first?.int8.queryKeyValue == nil ? .fp32 : .int8 }

    struct Layer: Sendable {
        /// The query, key and value projections stacked into one `[3 · hidden, hidden]` weight,
        /// so the three are one GEMM three times as wide (and the attention kernel reads Q, K
        /// and V as column blocks of its output).
        var queryKeyValue: (weight: Tensor, bias: Tensor)
        var attentionOutput: (weight: Tensor, bias: Tensor)
        var attentionNorm: (gamma: Tensor, beta: Tensor)
        var intermediate: (weight: Tensor, bias: Tensor)
        var output: (weight: Tensor, bias: Tensor)
        var outputNorm: (gamma: Tensor, beta: Tensor)
        /// The linear layers quantised, when the encoder runs them in int8.
        var int8: Int8Layers = Int8Layers()
    }

    /// The inputs of a layer's linear layers that quantisation calibrates on.
    package enum LinearInput: Sendable {
        /// The layer's input, which Q, K and V read.
        case queryKeyValue
        /// The attention block's normalised output, which the FFN's up projection reads.
        case intermediate
        /// GELU's output, which the FFN's down projection reads (one block of rows at a time).
        case output
    }

    struct Int8Layers: Sendable {
        var queryKeyValue: QuantizedLinear?
        var attentionOutput: QuantizedLinear?
        var intermediate: QuantizedLinear?
        var output: QuantizedLinear?
    }

    /// The same encoder with its linear layers in int8: weights quantised per output channel now,
    /// activations per token as they arrive (dynamic quantisation). Embeddings, layer norms,
    /// attention and GELU stay fp32.
    ///
    /// The inputs of Q·K·V and of the FFN's up projection are layer-norm outputs with a few
    /// channels ten to twenty times the others (channel 99 at ~28 against a median of ~1.8), the
    /// same channels for every token. Quantised per token as they are, those channels set the
    /// scale and the rest keep a few levels. So those two layers are smoothed as SmoothQuant does
    /// (Xiao et al. 2023, α = 0.5): each channel of the activation is divided by
    /// `s_j = √(max|x_j| / max|w_·j|)` and the weight's column multiplied by it. The maxima come
    /// from one calibration pass over 16 sequences of 62 random wordpieces (seeded), which finds the
    /// same outlier channels as real text does (Cranfield passages calibrated no better). Measured
    /// on the 256 benchmark sentences, the lowest cosine to the fp32 embedding rose from 0.9949 to
    /// 0.9980. Smoothing the attention output and FFN down projections as well made it worse
    /// (0.9978), so they are not smoothed. The FFN down projection's input, GELU's output, has one
    /// or two channels far above the rest (~24 against ~0.9): its two largest (by the same
    /// calibration) stay in fp32. With activations quantised asymmetrically (a zero point per
    /// token), the lowest cosine is 0.9991 (docs/performance/minilm.md).
    package func quantized() -> BertEncoder {
        var observed: [Int: [Float]] = [:]
        var generator = SplitMix64(seed: 23)
        let first = 1000  // past [PAD], [unused…], [CLS], [SEP], [MASK]
        let calibration = (0..<16).map { _ in
            [Int32(101)]
                + (0..<62).map { _ in
                    Int32(first + Int(generator.next() % UInt64(configuration.vocabularySize - first)))
                } + [102]
        }
        _ = forward(
            calibration,
            observe: { layer, input, x in
                let key = layer * 3 + (input == .queryKeyValue ? 0 : input == .intermediate ? 1 : 2)
                var maxima = observed[key] ?? [Float](repeating: 0, count: x.columns)
                for (index, value) in x.storage.enumerated() {
                    maxima[index % x.columns] = max(maxima[index % x.columns], abs(value))
                }
                observed[key] = maxima
            })
        var copy = self
        copy.layers = layers.enumerated().map { index, layer in
            var layer = layer
            let qkv = layer.queryKeyValue
            let up = layer.intermediate
            layer.int8.queryKeyValue = QuantizedLinear(
                weight: qkv.weight, bias: qkv.bias,
                smoothing: observed[index * 3].map {
                    QuantizedLinear.smoothing(activationMaxima: $0, weight: qkv.weight)
                })
            layer.int8.attentionOutput = QuantizedLinear(
                weight: layer.attentionOutput.weight, bias: layer.attentionOutput.bias)
            layer.int8.intermediate = QuantizedLinear(
                weight: up.weight, bias: up.bias,
                smoothing: observed[index * 3 + 1].map {
                    QuantizedLinear.smoothing(activationMaxima: $0, weight: up.weight)
                })
            // GELU's output has one or two channels far above the rest (24 against ~0.9): kept in
            // fp32, they no longer set every token's scale.
            let downMaxima = observed[index * 3 + 2] ?? []
            let outliers = downMaxima.indices.sorted { downMaxima[$0] > downMaxima[$1] }.prefix(2)
            layer.int8.output = QuantizedLinear(
                weight: layer.output.weight, bias: layer.output.bias, outliers: Array(outliers))
            return layer
        }
        return copy
    }

    /// Loads and shape-checks every tensor the encoder needs; keys have no `bert.` prefix.
    package init(weights: SafeTensors, configuration: BertConfiguration) throws(ModelError) {
        self.configuration = configuration
        let hidden = configuration.hiddenSize
        let inner = configuration.intermediateSize
        func linear(_ prefix: String, _ out: Int, _ input: Int) throws(ModelError) -> (weight: Tensor, bias: Tensor) {
            (
                try weights.tensor(prefix + ".weight", shape: [out, input]),
                try weights.tensor(prefix + ".bias", shape: [out])
            )
        }
        func norm(_ prefix: String) throws(ModelError) -> (gamma: Tensor, beta: Tensor) {
            (
                try weights.tensor(prefix + ".weight", shape: [hidden]),
                try weights.tensor(prefix + ".bias", shape: [hidden])
            )
        }
        func stacked(_ parts: [(weight: Tensor, bias: Tensor)]) -> (weight: Tensor, bias: Tensor) {
            (
                Tensor(shape: [parts.count * hidden, hidden], storage: parts.flatMap(\.weight.storage)),
                Tensor(shape: [parts.count * hidden], storage: parts.flatMap(\.bias.storage))
            )
        }
        wordEmbeddings = try weights.tensor(
            "embeddings.word_embeddings.weight", shape: [configuration.vocabularySize, hidden])
        positionEmbeddings = try weights.tensor(
            "embeddings.position_embeddings.weight", shape: [configuration.maxPositions, hidden])
        typeEmbeddings = try weights.tensor(
            "embeddings.token_type_embeddings.weight", shape: [configuration.typeVocabularySize, hidden])
        embeddingNorm = try norm("embeddings.LayerNorm")
        var layers: [Layer] = []
        for index in 0..<configuration.layers {
            let p = "encoder.layer.\(index)."
            layers.append(
                Layer(
                    queryKeyValue: stacked([
                        try linear(p + "attention.self.query", hidden, hidden),
                        try linear(p + "attention.self.key", hidden, hidden),
                        try linear(p + "attention.self.value", hidden, hidden),
                    ]),
                    attentionOutput: try linear(p + "attention.output.dense", hidden, hidden),
                    attentionNorm: try norm(p + "attention.output.LayerNorm"),
                    intermediate: try linear(p + "intermediate.dense", inner, hidden),
                    output: try linear(p + "output.dense", hidden, inner),
                    outputNorm: try norm(p + "output.LayerNorm")
                ))
        }
        self.layers = layers
    }

    /// The word-embedding matrix `[vocabulary, hidden]` (tied to nothing in an encoder, but the
    /// closest thing to a vocabulary projection).
    package var tokenEmbeddings: Tensor { wordEmbeddings }

    /// Runs the batch. Returns the last hidden states `[B, T, hidden]` (T = longest sequence;
    /// rows past a sequence's length are padding) and the requested activations.
    ///
    /// - Parameter types: token-type ids per sequence (sentence pairs); all 0 when nil.
    /// - Parameter intervention: called with each layer's output `[B, T, hidden]` (and the
    ///   sequences' lengths) before the next layer reads it, to edit the residual stream (an SAE's
    ///   reconstruction spliced in, say).
    package func forward(
        _ batch: [[Int32]], types: [[Int32]]? = nil, capture: CaptureRequest = .none, profile: OperationProfile? = nil,
        intervention: ((_ layer: Int, _ hidden: inout Tensor, _ lengths: [Int]) -> Void)? = nil,
        observe: ((_ layer: Int, _ input: LinearInput, _ x: Tensor) -> Void)? = nil
    ) -> (
        hidden: Tensor, captured: CapturedActivations
    ) {
        let hidden = configuration.hiddenSize
        let lengths = batch.map(\.count)
        let width = lengths.max() ?? 0
        precondition(
            width <= configuration.maxPositions,
            "sequence of \(width) tokens; the model takes \(configuration.maxPositions)")
        let tokens = batch.count * width
        var x = Tensor(zeros: [batch.count, width, hidden])
        OperationProfile.scope(profile, "embeddings") {
            OperationProfile.measure(profile, "embedding lookup", .embedding(tokens: tokens, hidden: hidden)) {
                x.storage.withUnsafeMutableBufferPointer { out in
                    for (b, ids) in batch.enumerated() {
                        for (t, id) in ids.enumerated() {
                            let base = (b * width + t) * hidden
                            let word = Int(id) * hidden
                            let position = t * hidden
                            let type = Int(types?[b][t] ?? 0) * hidden
                            for d in 0..<hidden {
                                out[base + d] =
                                    wordEmbeddings.storage[word + d] + positionEmbeddings.storage[position + d]
                                    + typeEmbeddings.storage[type + d]
                            }
                        }
                    }
                }
            }
            OperationProfile.measure(profile, "layer norm", .layerNorm(rows: tokens, columns: hidden)) {
                Kernels.layerNorm(
                    &x, gamma: embeddingNorm.gamma, beta: embeddingNorm.beta, epsilon: configuration.layerNormEpsilon)
            }
        }
        var captured = CapturedActivations()
        for (index, layer) in layers.enumerated() {
            x = OperationProfile.scope(profile, "layer \(index)") {
                run(
                    layer, on: x, observe: observe.map { observe in { observe(index, $0, $1) } }, lengths: lengths,
                    width: width, keepAttention: capture.attentionLayers.contains(index),
                    keepQueryKey: capture.queryKeyLayers.contains(index), profile: profile,
                    reportQueryKey: { queries, keys in
                        captured.queries[index] = queries
                        captured.keys[index] = keys
                    },
                    report: { probabilities in captured.attention[index] = probabilities }
                )
            }
            intervention?(index, &x, lengths)
            if capture.residualLayers.contains(index) {
                captured.residual[index] = Self.sequences(x, lengths: lengths, width: width)
            }
        }
        return (x, captured)
    }

    /// Rows of the feed-forward block run at once (see `run`).
    static let feedForwardRows = 256

    /// Each sequence's real rows of a padded `[B, width, C]` tensor, as `[length, C]`, or of
    /// the given block of its columns (one of Q, K, V in the fused projection).
    private static func sequences(_ x: Tensor, lengths: [Int], width: Int, columns: Range<Int>? = nil) -> [Tensor] {
        let stride = x.shape.last ?? 0
        let columns = columns ?? 0..<stride
        return lengths.enumerated().map { b, length in
            var storage: [Float] = []
            storage.reserveCapacity(length * columns.count)
            for t in 0..<length {
                let base = (b * width + t) * stride
                storage.append(contentsOf: x.storage[(base + columns.lowerBound)..<(base + columns.upperBound)])
            }
            return Tensor(shape: [length, columns.count], storage: storage)
        }
    }

    private func run(
        _ layer: Layer, on x: Tensor, observe: ((LinearInput, Tensor) -> Void)?, lengths: [Int], width: Int,
        keepAttention: Bool, keepQueryKey: Bool,
        profile: OperationProfile?, reportQueryKey: (_ queries: [Tensor], _ keys: [Tensor]) -> Void,
        report: ([Tensor]) -> Void
    ) -> Tensor {
        let hidden = configuration.hiddenSize
        let heads = configuration.heads
        let headSize = configuration.headSize
        let rows = x.rows
        let inner = configuration.intermediateSize
        let projection = KernelCost.linear(rows: rows, inputs: hidden, outputs: hidden)
        observe?(.queryKeyValue, x)
        let qkv = OperationProfile.measure(
            profile, "linear Q·K·V 384→3×384", .linear(rows: rows, inputs: hidden, outputs: 3 * hidden)
        ) {
            layer.int8.queryKeyValue.map { Kernels.linear(x, quantized: $0) }
                ?? Kernels.linear(x, weight: layer.queryKeyValue.weight, bias: layer.queryKeyValue.bias)
        }
        if keepQueryKey {
            reportQueryKey(
                Self.sequences(qkv, lengths: lengths, width: width, columns: 0..<hidden),
                Self.sequences(qkv, lengths: lengths, width: width, columns: hidden..<(2 * hidden)))
        }
        var kept: [Tensor] = []
        let attentionCost = KernelCost.attention(lengths: lengths, heads: heads, headSize: headSize)
        // The int8 encoder's attention in bf16 (AMX tiles or AVX-512 BF16) where the CPU has
        // them, unless the process keeps it narrower (`bench embed --int8-attention fp32`).
        let context = OperationProfile.measure(profile, "attention QKᵀ·softmax·V", attentionCost) {
            Kernels.attention(
                qkv: qkv, lengths: lengths, heads: heads, headSize: headSize,
                probabilities: keepAttention ? { _, weights in kept.append(weights) } : nil,
                form: layer.int8.queryKeyValue != nil ? Kernels.AttentionForm.processWidest : .fp32)
        }
        if keepAttention { report(kept) }
        let addNorm = KernelCost.addLayerNorm(rows: rows, columns: hidden)
        var attended = OperationProfile.measure(profile, "linear attention out 384→384", projection) {
            layer.int8.attentionOutput.map { Kernels.linear(context, quantized: $0) }
                ?? Kernels.linear(context, weight: layer.attentionOutput.weight, bias: layer.attentionOutput.bias)
        }
        OperationProfile.measure(profile, "residual add + layer norm", addNorm) {
            Kernels.layerNorm(
                &attended, adding: x, gamma: layer.attentionNorm.gamma, beta: layer.attentionNorm.beta,
                epsilon: configuration.layerNormEpsilon)
        }
        // The feed-forward block a block of rows at a time: the 1536-wide intermediate of 256 rows
        // (1.5 MB) stays in L2/L3 between the up projection, GELU and the down projection,
        // instead of a [rows, 1536] matrix going to memory and back three times.
        observe?(.intermediate, attended)
        var output = Tensor(zeros: attended.shape)
        var intermediate = Tensor(zeros: [min(rows, Self.feedForwardRows), inner])
        for start in stride(from: 0, to: rows, by: Self.feedForwardRows) {
            let block = start..<min(rows, start + Self.feedForwardRows)
            if block.count != intermediate.rows { intermediate = Tensor(zeros: [block.count, inner]) }
            OperationProfile.measure(
                profile, "linear FFN up 384→1536", .linear(rows: block.count, inputs: hidden, outputs: inner)
            ) {
                if let int8 = layer.int8.intermediate {
                    Kernels.linear(attended, rows: block, quantized: int8, into: &intermediate, at: 0)
                } else {
                    Kernels.linear(
                        attended, rows: block, weight: layer.intermediate.weight, bias: layer.intermediate.bias,
                        into: &intermediate, at: 0)
                }
            }
            OperationProfile.measure(profile, "GELU", .gelu(count: block.count * inner)) { Kernels.gelu(&intermediate) }
            observe?(.output, intermediate)
            OperationProfile.measure(
                profile, "linear FFN down 1536→384", .linear(rows: block.count, inputs: inner, outputs: hidden)
            ) {
                if let int8 = layer.int8.output {
                    Kernels.linear(
                        intermediate, rows: 0..<block.count, quantized: int8, into: &output, at: block.lowerBound)
                } else {
                    Kernels.linear(
                        intermediate, rows: 0..<block.count, weight: layer.output.weight, bias: layer.output.bias,
                        into: &output, at: block.lowerBound)
                }
            }
        }
        OperationProfile.measure(profile, "residual add + layer norm", addNorm) {
            Kernels.layerNorm(
                &output, adding: attended, gamma: layer.outputNorm.gamma, beta: layer.outputNorm.beta,
                epsilon: configuration.layerNormEpsilon)
        }
        return output
    }
}
