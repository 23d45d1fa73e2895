import Foundation
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
    let layers: [Layer]

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
        intervention: ((_ layer: Int, _ hidden: inout Tensor, _ lengths: [Int]) -> Void)? = nil
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
        var captured = CapturedActivations()
        for (index, layer) in layers.enumerated() {
            x = run(
                layer, on: x, lengths: lengths, width: width, keepAttention: capture.attentionLayers.contains(index),
                keepQueryKey: capture.queryKeyLayers.contains(index), profile: profile,
                reportQueryKey: { queries, keys in
                    captured.queries[index] = queries
                    captured.keys[index] = keys
                },
                report: { probabilities in captured.attention[index] = probabilities }
            )
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
        _ layer: Layer, on x: Tensor, lengths: [Int], width: Int, keepAttention: Bool, keepQueryKey: Bool,
        profile: OperationProfile?, reportQueryKey: (_ queries: [Tensor], _ keys: [Tensor]) -> Void,
        report: ([Tensor]) -> Void
    ) -> Tensor {
        let hidden = configuration.hiddenSize
        let heads = configuration.heads
        let headSize = configuration.headSize
        let rows = x.rows
        let inner = configuration.intermediateSize
        let projection = KernelCost.linear(rows: rows, inputs: hidden, outputs: hidden)
        let qkv = OperationProfile.measure(
            profile, "linear Q·K·V 384→3×384", .linear(rows: rows, inputs: hidden, outputs: 3 * hidden)
        ) {
            Kernels.linear(x, weight: layer.queryKeyValue.weight, bias: layer.queryKeyValue.bias)
        }
        if keepQueryKey {
            reportQueryKey(
                Self.sequences(qkv, lengths: lengths, width: width, columns: 0..<hidden),
                Self.sequences(qkv, lengths: lengths, width: width, columns: hidden..<(2 * hidden)))
        }
        var kept: [Tensor] = []
        let attentionCost = KernelCost.attention(lengths: lengths, heads: heads, headSize: headSize)
        let context = OperationProfile.measure(profile, "attention QKᵀ·softmax·V", attentionCost) {
            Kernels.attention(
                qkv: qkv, lengths: lengths, heads: heads, headSize: headSize,
                probabilities: keepAttention ? { _, weights in kept.append(weights) } : nil)
        }
        if keepAttention { report(kept) }
        let addNorm = KernelCost.addLayerNorm(rows: rows, columns: hidden)
        var attended = OperationProfile.measure(profile, "linear attention out 384→384", projection) {
            Kernels.linear(context, weight: layer.attentionOutput.weight, bias: layer.attentionOutput.bias)
        }
        OperationProfile.measure(profile, "residual add + layer norm", addNorm) {
            Kernels.layerNorm(
                &attended, adding: x, gamma: layer.attentionNorm.gamma, beta: layer.attentionNorm.beta,
                epsilon: configuration.layerNormEpsilon)
        }
        // The feed-forward block a block of rows at a time: the 1536-wide intermediate of 256 rows
        // (1.5 MB) stays in L2/L3 between the up projection, GELU and the down projection,
        // instead of a [rows, 1536] matrix going to memory and back three times.
        var output = Tensor(zeros: attended.shape)
        var intermediate = Tensor(zeros: [min(rows, Self.feedForwardRows), inner])
        for start in stride(from: 0, to: rows, by: Self.feedForwardRows) {
            let block = start..<min(rows, start + Self.feedForwardRows)
            if block.count != intermediate.rows { intermediate = Tensor(zeros: [block.count, inner]) }
            OperationProfile.measure(
                profile, "linear FFN up 384→1536", .linear(rows: block.count, inputs: hidden, outputs: inner)
            ) {
                Kernels.linear(
                    attended, rows: block, weight: layer.intermediate.weight, bias: layer.intermediate.bias,
                    into: &intermediate, at: 0)
            }
            OperationProfile.measure(profile, "GELU", .gelu(count: block.count * inner)) { Kernels.gelu(&intermediate) }
            OperationProfile.measure(
                profile, "linear FFN down 1536→384", .linear(rows: block.count, inputs: inner, outputs: hidden)
            ) {
                Kernels.linear(
                    intermediate, rows: 0..<block.count, weight: layer.output.weight, bias: layer.output.bias,
                    into: &output, at: block.lowerBound)
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
