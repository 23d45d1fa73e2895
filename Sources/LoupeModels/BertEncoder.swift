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
        var query: (weight: Tensor, bias: Tensor)
        var key: (weight: Tensor, bias: Tensor)
        var value: (weight: Tensor, bias: Tensor)
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
                    query: try linear(p + "attention.self.query", hidden, hidden),
                    key: try linear(p + "attention.self.key", hidden, hidden),
                    value: try linear(p + "attention.self.value", hidden, hidden),
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

    /// Each sequence's real rows of a padded `[B, width, hidden]` tensor, as `[length, hidden]`.
    private static func sequences(_ x: Tensor, lengths: [Int], width: Int) -> [Tensor] {
        let hidden = x.shape.last ?? 0
        return lengths.enumerated().map { b, length in
            Tensor(
                shape: [length, hidden],
                storage: Array(x.storage[(b * width * hidden)..<((b * width + length) * hidden)]))
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
        let q = OperationProfile.measure(profile, "linear Q/K/V/out 384→384", projection) {
            Kernels.linear(x, weight: layer.query.weight, bias: layer.query.bias)
        }
        let k = OperationProfile.measure(profile, "linear Q/K/V/out 384→384", projection) {
            Kernels.linear(x, weight: layer.key.weight, bias: layer.key.bias)
        }
        let v = OperationProfile.measure(profile, "linear Q/K/V/out 384→384", projection) {
            Kernels.linear(x, weight: layer.value.weight, bias: layer.value.bias)
        }
        if keepQueryKey {
            reportQueryKey(
                Self.sequences(q, lengths: lengths, width: width), Self.sequences(k, lengths: lengths, width: width))
        }
        var context = Tensor(zeros: x.shape)
        var kept: [Tensor] = []
        var scores = [Float](repeating: 0, count: width * width)
        let scale = 1 / Float(headSize).squareRoot()
        let attentionCost = KernelCost.attention(lengths: lengths, heads: heads, headSize: headSize)
        OperationProfile.measure(profile, "attention QKᵀ·softmax·V", attentionCost) {
            q.storage.withUnsafeBufferPointer { qp in
                k.storage.withUnsafeBufferPointer { kp in
                    v.storage.withUnsafeBufferPointer { vp in
                        context.storage.withUnsafeMutableBufferPointer { cp in
                            scores.withUnsafeMutableBufferPointer { sp in
                                for (b, length) in lengths.enumerated() {
                                    var probabilities =
                                        keepAttention ? [Float](repeating: 0, count: heads * length * length) : []
                                    for h in 0..<heads {
                                        let offset = b * width * hidden + h * headSize
                                        // scores = q·kᵀ/√d over this sequence's real tokens only.
                                        BLAS.sgemm(
                                            m: length, n: length, k: headSize, a: qp.baseAddress! + offset, lda: hidden,
                                            b: kp.baseAddress! + offset, ldb: hidden, transposeB: true,
                                            c: sp.baseAddress!, ldc: length, alpha: scale
                                        )
                                        Kernels.softmaxRows(
                                            sp.baseAddress!, rows: length, columns: length, valid: length)
                                        BLAS.sgemm(
                                            m: length, n: headSize, k: length, a: sp.baseAddress!, lda: length,
                                            b: vp.baseAddress! + offset, ldb: hidden, c: cp.baseAddress! + offset,
                                            ldc: hidden
                                        )
                                        if keepAttention {
                                            for i in 0..<(length * length) {
                                                probabilities[h * length * length + i] = sp[i]
                                            }
                                        }
                                    }
                                    if keepAttention {
                                        kept.append(Tensor(shape: [heads, length, length], storage: probabilities))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        if keepAttention { report(kept) }
        let elements = rows * hidden
        var attended = OperationProfile.measure(profile, "linear Q/K/V/out 384→384", projection) {
            Kernels.linear(context, weight: layer.attentionOutput.weight, bias: layer.attentionOutput.bias)
        }
        OperationProfile.measure(profile, "residual add", .add(count: elements)) { Kernels.add(&attended, x) }
        OperationProfile.measure(profile, "layer norm", .layerNorm(rows: rows, columns: hidden)) {
            Kernels.layerNorm(
                &attended, gamma: layer.attentionNorm.gamma, beta: layer.attentionNorm.beta,
                epsilon: configuration.layerNormEpsilon)
        }
        var intermediate = OperationProfile.measure(
            profile, "linear FFN up 384→1536", .linear(rows: rows, inputs: hidden, outputs: inner)
        ) {
            Kernels.linear(attended, weight: layer.intermediate.weight, bias: layer.intermediate.bias)
        }
        OperationProfile.measure(profile, "GELU", .gelu(count: rows * inner)) { Kernels.gelu(&intermediate) }
        var output = OperationProfile.measure(
            profile, "linear FFN down 1536→384", .linear(rows: rows, inputs: inner, outputs: hidden)
        ) {
            Kernels.linear(intermediate, weight: layer.output.weight, bias: layer.output.bias)
        }
        OperationProfile.measure(profile, "residual add", .add(count: elements)) { Kernels.add(&output, attended) }
        OperationProfile.measure(profile, "layer norm", .layerNorm(rows: rows, columns: hidden)) {
            Kernels.layerNorm(
                &output, gamma: layer.outputNorm.gamma, beta: layer.outputNorm.beta,
                epsilon: configuration.layerNormEpsilon)
        }
        return output
    }
}
