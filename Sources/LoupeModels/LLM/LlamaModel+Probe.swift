import Foundation
import LoupeBase
import LoupeTensor

/// One query head of one layer.
package struct LlamaHead: Hashable, Sendable, Codable, Comparable {
    package var layer: Int
    package var head: Int

    package init(layer: Int, head: Int) {
        self.layer = layer
        self.head = head
    }

    package static func < (a: LlamaHead, b: LlamaHead) -> Bool { (a.layer, a.head) < (b.layer, b.head) }
}

/// What a probe keeps of a teacher-forced pass. Everything is opt-in and limited to the layers and
/// positions asked for, so a probe of a 2,000-token context keeps kilobytes, not gigabytes (every
/// head's full pattern at 2,000 tokens is 16 MB per head and layer: 4.3 GB for all 270).
package struct LlamaProbeRequest: Sendable, Equatable {
    /// Layers whose attention probabilities are kept, every query head.
    package var attentionLayers: Set<Int> = []
    /// The query positions whose attention rows are kept; nil keeps every row.
    package var attentionQueries: [Int]?
    /// Positions whose residual stream (before each layer and after the last), attention output
    /// and feed-forward output are kept; empty keeps none.
    package var positions: [Int] = []
    /// Also keep each query head's own share of the attention output at `positions` (the output
    /// projection applied to that head's context alone): direct logit attribution per head.
    package var headOutputs = false
    /// Heads whose context is zeroed before the output projection (zero ablation).
    package var ablated: Set<LlamaHead> = []
    /// Also return every position's logits (the model's own, after any ablation).
    package var logits = false

    package init(
        attentionLayers: Set<Int> = [], attentionQueries: [Int]? = nil, positions: [Int] = [],
        headOutputs: Bool = false, ablated: Set<LlamaHead> = [], logits: Bool = false
    ) {
        self.attentionLayers = attentionLayers
        self.attentionQueries = attentionQueries
        self.positions = positions
        self.headOutputs = headOutputs
        self.ablated = ablated
        self.logits = logits
    }
}

/// The insides of one teacher-forced pass, as ``LlamaProbeRequest`` asked.
///
/// Shapes are row-major and flattened. `P` is `positions.count`, `Q` is `queries.count`, `T` the
/// token count, `W` the model's width.
package struct LlamaProbe: Sendable {
    package var tokens: [Int32]
    /// The positions the residual and component captures hold, in the order asked.
    package var positions: [Int]
    /// The query positions each kept attention layer holds rows for.
    package var queries: [Int]
    /// Per kept layer, `[head][Q][T]`: query `queries[i]`'s probabilities over every key, zero past
    /// its own position (causal). Query head h reads key/value head `h / groupSize`.
    package var attention: [Int: [Float]] = [:]
    /// `[layers + 1][P · W]`: entry l is the stream entering layer l (entry 0 the token
    /// embeddings); the last is the stream leaving the last layer, before the final norm.
    package var residuals: [[Float]] = []
    /// `[layers][P · W]`: each layer's attention output after the output projection.
    package var attentionOutputs: [[Float]] = []
    /// `[layers][P · W]`: each layer's feed-forward (SwiGLU) output.
    package var feedForwardOutputs: [[Float]] = []
    /// `[layers][heads · P · W]` with `headOutputs`: head h's share of the attention output (the
    /// layer's attention output is their sum: the projection has no bias).
    package var headOutputs: [[Float]] = []
    /// `[T, vocabulary]` when asked for.
    package var logits: Tensor?

    /// The same capture at one of its ``positions`` only (its residual stream and components):
    /// the lens for a token under a cursor, from a probe that kept every position once.
    package func at(position: Int) -> LlamaProbe? {
        guard let index = positions.firstIndex(of: position),
            let width = residuals.first.map({ $0.count / positions.count })
        else { return nil }
        let span = positions.count * width
        func slice(_ values: [Float], parts: Int = 1) -> [Float] {
            var kept: [Float] = []
            for part in 0..<parts {
                let start: Int = part * span + index * width
                kept += values[start..<(start + width)]
            }
            return kept
        }
        var one = LlamaProbe(tokens: tokens, positions: [position], queries: [])
        one.residuals = residuals.map { slice($0) }
        one.attentionOutputs = attentionOutputs.map { slice($0) }
        one.feedForwardOutputs = feedForwardOutputs.map { slice($0) }
        one.headOutputs = headOutputs.map { slice($0, parts: $0.count / (positions.count * width)) }
        return one
    }

    /// The attention row of `query` (one of ``queries``) in one head of a kept layer.
    package func attentionRow(layer: Int, head: Int, query: Int) -> ArraySlice<Float>? {
        guard let values = attention[layer], let index = queries.firstIndex(of: query) else { return nil }
        let t = tokens.count
        let start = (head * queries.count + index) * t
        return values[start..<(start + t)]
    }
}

extension LlamaModel {
    /// The key/value head query head `head` reads: GGUF stores Q's heads in order and llama.cpp
    /// groups them (`h / (heads / keyValueHeads)`), so heads 0–2 read KV head 0 in SmolLM2.
    package func keyValueHead(of head: Int) -> Int { head / configuration.groupSize }

    /// Runs `ids` teacher-forced from the start, as ``logits(for:)`` does, recording what `request`
    /// asks for. The layers are this file's own loop over the forward pass's building blocks
    /// (norms, fused products, RoPE, SwiGLU, head), with attention computed here so that its
    /// probabilities can be kept and heads ablated; with nothing ablated the logits are the
    /// forward pass's.
    ///
    /// - Throws: ``ModelError`` for no ids, an id outside the vocabulary, more ids than the
    ///   context, or a layer, position or head out of range.
    package func probe(_ ids: [Int32], _ request: LlamaProbeRequest = LlamaProbeRequest()) throws(ModelError)
        -> LlamaProbe
    {
        try validate(ids, request)
        let t = ids.count
        let width = configuration.width
        let queries = request.attentionQueries ?? Array(0..<t)
        var result = LlamaProbe(tokens: ids, positions: request.positions, queries: queries)
        let batch = Batch(tokens: [ids], past: [0])
        var x = embed(batch)
        func gather(_ tensor: Tensor) -> [Float] {
            var kept: [Float] = []
            kept.reserveCapacity(request.positions.count * width)
            for position in request.positions {
                kept += tensor.storage[(position * width)..<((position + 1) * width)]
            }
            return kept
        }
        if !request.positions.isEmpty { result.residuals.append(gather(x)) }
        for (index, layer) in layers.enumerated() {
            let normalized = Self.rmsNorm(x, weight: layer.attentionNorm, epsilon: configuration.rmsEpsilon)
            var qkv = layer.queryKeyValue.apply(normalized, threads: threads)
            applyRoPE(&qkv, positions: batch.positions)
            var context = Tensor(zeros: [t, width])
            let kept = attend(
                qkv: qkv, tokens: t, into: &context,
                keeping: request.attentionLayers.contains(index) ? queries : nil)
            if let kept { result.attention[index] = kept }
            for head in 0..<configuration.heads where request.ablated.contains(LlamaHead(layer: index, head: head)) {
                Self.zero(&context, columns: (head * configuration.headSize)..<((head + 1) * configuration.headSize))
            }
            var h = layer.attentionOutput.apply(context, threads: threads)
            if !request.positions.isEmpty {
                result.attentionOutputs.append(gather(h))
                if request.headOutputs {
                    result.headOutputs.append(perHeadOutputs(of: context, layer: layer, positions: request.positions))
                }
            }
            Kernels.add(&h, x)
            let normalizedH = Self.rmsNorm(h, weight: layer.feedForwardNorm, epsilon: configuration.rmsEpsilon)
            let gateUp = layer.gateUp.apply(normalizedH, threads: threads)
            var activation = Tensor(zeros: [t, configuration.feedForwardWidth])
            swiGLU(gateUp, into: &activation, rows: t)
            var output = layer.down.apply(activation, threads: threads)
            if !request.positions.isEmpty { result.feedForwardOutputs.append(gather(output)) }
            Kernels.add(&output, h)
            x = output
            if !request.positions.isEmpty { result.residuals.append(gather(x)) }
        }
        if request.logits {
            result.logits = project(x, batch: batch, logits: .all, profile: nil)[0]
        }
        return result
    }

    private func validate(_ ids: [Int32], _ request: LlamaProbeRequest) throws(ModelError) {
        let vocabulary = configuration.vocabularySize
        guard !ids.isEmpty else { throw ModelError(file: fileName, message: "a probe needs at least one token") }
        if let bad = ids.first(where: { $0 < 0 || Int($0) >= vocabulary }) {
            throw ModelError(file: fileName, message: "token id \(bad) is outside the vocabulary (0..<\(vocabulary))")
        }
        guard ids.count <= configuration.contextLength else {
            throw ModelError(
                file: fileName,
                message: "\(ids.count) tokens are more than the model's context of \(configuration.contextLength)")
        }
        if let layer = request.attentionLayers.first(where: { !(0..<configuration.layers).contains($0) }) {
            throw ModelError(
                file: fileName,
                message: "layer \(layer) is out of range: the model has layers 0…\(configuration.layers - 1)")
        }
        let positions = request.positions + (request.attentionQueries ?? [])
        if let position = positions.first(where: { !(0..<ids.count).contains($0) }) {
            throw ModelError(
                file: fileName,
                message: "position \(position) is out of range: the text has positions 0…\(ids.count - 1)")
        }
        if let head = request.ablated.first(where: {
            !(0..<configuration.layers).contains($0.layer) || !(0..<configuration.heads).contains($0.head)
        }) {
            throw ModelError(file: fileName, message: "no head \(head.head) in layer \(head.layer) to ablate")
        }
    }

    /// Causal grouped-query attention of all `tokens` rows of the fused, RoPE'd `qkv` against
    /// themselves, into `context`; returns the probabilities of the `keeping` query rows
    /// (`[head][keeping.count][tokens]`) when asked. Query rows go in blocks as the forward pass's
    /// do, so a long context's scores stay `[32, tokens]`.
    private func attend(qkv: Tensor, tokens t: Int, into context: inout Tensor, keeping: [Int]?) -> [Float]? {
        let d = configuration.headSize
        let width = configuration.width
        let keyValueWidth = configuration.keyValueWidth
        let stride = qkv.columns
        let blockRows = min(t, Self.attentionBlockRows)
        var scores = [Float](repeating: 0, count: blockRows * t)
        var kept = keeping.map { [Float](repeating: 0, count: configuration.heads * $0.count * t) }
        // Where each query row's probabilities go among the kept rows.
        var slot = [Int](repeating: -1, count: t)
        for (index, query) in (keeping ?? []).enumerated() { slot[query] = index }
        let keptRows = keeping?.count ?? 0
        qkv.storage.withUnsafeBufferPointer { q in
            scores.withUnsafeMutableBufferPointer { s in
                context.storage.withUnsafeMutableBufferPointer { out in
                    for head in 0..<configuration.heads {
                        let kv = keyValueHead(of: head)
                        let keys = q.baseAddress! + width + kv * d
                        let values = q.baseAddress! + width + keyValueWidth + kv * d
                        for start in Swift.stride(from: 0, to: t, by: blockRows) {
                            let rows = min(blockRows, t - start)
                            let seen = start + rows
                            BLAS.sgemm(
                                m: rows, n: seen, k: d, a: q.baseAddress! + start * stride + head * d, lda: stride,
                                b: keys, ldb: stride, transposeB: true, c: s.baseAddress!, ldc: seen,
                                alpha: 1 / Float(d).squareRoot())
                            for i in 0..<rows {
                                let row = s.baseAddress! + i * seen
                                Self.causalSoftmax(row, valid: start + i + 1, count: seen)
                                if slot[start + i] >= 0 {
                                    let target = (head * keptRows + slot[start + i]) * t
                                    for j in 0..<seen { kept![target + j] = row[j] }
                                }
                            }
                            BLAS.sgemm(
                                m: rows, n: d, k: seen, a: s.baseAddress!, lda: seen, b: values, ldb: stride,
                                c: out.baseAddress! + start * width + head * d, ldc: width)
                        }
                    }
                }
            }
        }
        return kept
    }

    /// Each head's share of the attention output at `positions`: the output projection of the
    /// context with every other head's columns zeroed, `[heads · positions · width]`.
    private func perHeadOutputs(of context: Tensor, layer: Layer, positions: [Int]) -> [Float] {
        let width = configuration.width
        let d = configuration.headSize
        var outputs: [Float] = []
        outputs.reserveCapacity(configuration.heads * positions.count * width)
        for head in 0..<configuration.heads {
            var alone = Tensor(zeros: [positions.count, width])
            for (row, position) in positions.enumerated() {
                let from = position * width + head * d
                alone.storage.replaceSubrange(
                    (row * width + head * d)..<(row * width + head * d + d), with: context.storage[from..<(from + d)])
            }
            outputs += layer.attentionOutput.apply(alone, threads: threads).storage
        }
        return outputs
    }

    /// Sets `columns` of every row to zero.
    private static func zero(_ tensor: inout Tensor, columns: Range<Int>) {
        let width = tensor.columns
        for row in 0..<tensor.rows {
            for column in columns { tensor.storage[row * width + column] = 0 }
        }
    }
}
