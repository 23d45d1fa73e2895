import CKernels
import LoupeTensor

extension LlamaModel {
    /// Reads new tokens for several sequences of a ``PagedKVCache`` in one pass over the weights:
    /// sequence `ids[b]`'s `tokens[b]` go after the rows it holds. A batch of decode steps (one
    /// token each, every sequence at its own position), a chunk of a joining sequence's prefill,
    /// or a mix: every row is packed into one matrix, so each projection reads the weights once.
    ///
    /// Each sequence's rows attend as they would on the serial ``LlamaKVCache``, so that a
    /// sequence's logits do not depend on what it was batched with: a decode step's single row
    /// goes to ``DecodeAttention`` (every decoding sequence in one call), and prompt rows go
    /// through the serial prefill's blocked sgemms (``attendPrompt``) over the sequence's rows
    /// gathered from its blocks. With a ``PagedKVPrecision/f32`` cache, a q8 model (whose
    /// products are integer sums per row) and prompt chunks aligned to ``promptAlignment``, the
    /// logits then have the serial path's bits; an f16 cache only comes near them.
    ///
    /// - Parameters:
    ///   - prompt: per sequence, whether its tokens are prompt tokens, read as a prefill even when
    ///     there is one (the last row of a chunked prompt); empty: a sequence with more than one
    ///     token is a prefill.
    /// - Returns: per sequence, its logits as `logits` asks.
    /// - Throws: ``ModelError`` for an unknown id, a token outside the vocabulary, or a full pool
    ///   (before any row is written; blocks reserved for earlier sequences of the call stay reserved).
    package func forward(
        _ tokens: [[Int32]], sequences ids: [Int], cache: PagedKVCache, prompt: [Bool] = [],
        logits: LlamaLogits = .last
    ) throws(ModelError) -> [Tensor] {
        precondition(tokens.count == ids.count, "\(tokens.count) token lists for \(ids.count) sequences")
        precondition(prompt.isEmpty || prompt.count == ids.count, "\(prompt.count) prompt flags for \(ids.count)")
        precondition(
            cache.layers == configuration.layers && cache.rowWidth == configuration.keyValueWidth,
            "the paged cache was made for another model")
        let vocabulary = configuration.vocabularySize
        var past: [Int] = []
        for (b, new) in tokens.enumerated() {
            if let bad = new.first(where: { $0 < 0 || Int($0) >= vocabulary }) {
                throw ModelError(
                    file: fileName,
                    message: "sequence \(ids[b]): token id \(bad) is outside the vocabulary (0..<\(vocabulary))")
            }
            guard let sequence = cache.sequences[ids[b]] else {
                throw ModelError(file: fileName, message: "no sequence \(ids[b]) in the paged key/value cache")
            }
            past.append(sequence.count)
            do { try cache.reserve(ids[b], tokens: new.count) } catch {
                throw ModelError(file: fileName, message: "sequence \(ids[b]): \(error)")
            }
        }
        let batch = Batch(tokens: tokens, past: past)
        let prefill = prompt.isEmpty ? tokens.map { $0.count > 1 } : prompt
        var x = embed(batch)
        for (index, layer) in layers.enumerated() {
            x = run(layer, index: index, on: x, batch: batch, ids: ids, prefill: prefill, cache: cache)
        }
        for b in ids.indices {
            do { try cache.commit(ids[b], tokens: tokens[b]) } catch {
                throw ModelError(file: fileName, message: "sequence \(ids[b]): \(error)")
            }
        }
        return project(x, batch: batch, logits: logits, profile: nil)
    }

    /// One decoder block over all rows against the paged cache.
    private func run(
        _ layer: Layer, index: Int, on x: Tensor, batch: Batch, ids: [Int], prefill: [Bool], cache: PagedKVCache
    ) -> Tensor {
        let width = configuration.width
        let keyValueWidth = configuration.keyValueWidth
        let rows = batch.rows
        let normalized = Self.rmsNorm(x, weight: layer.attentionNorm, epsilon: configuration.rmsEpsilon)
        var qkv = layer.queryKeyValue.apply(normalized, threads: threads)
        applyRoPE(&qkv, positions: batch.positions)
        let stride = qkv.columns
        var context = Tensor(zeros: [rows, width])
        qkv.storage.withUnsafeBufferPointer { q in
            for b in ids.indices where batch.lengths[b] > 0 {
                for row in batch.starts[b]..<(batch.starts[b] + batch.lengths[b]) {
                    let key = q.baseAddress! + row * stride + width
                    cache.write(
                        ids[b], layer: index, position: batch.positions[row], key: key, value: key + keyValueWidth)
                }
            }
            context.storage.withUnsafeMutableBufferPointer { out in
                for b in ids.indices where batch.lengths[b] > 0 && prefill[b] {
                    let total = batch.past[b] + batch.lengths[b]
                    var keys = [Float](repeating: 0, count: total * keyValueWidth)
                    var values = keys
                    cache.gather(ids[b], layer: index, count: total, keys: &keys, values: &values)
                    attendPrompt(
                        q: q.baseAddress! + batch.starts[b] * stride, qkvStride: stride, rows: batch.lengths[b],
                        past: batch.past[b], keys: keys, values: values,
                        into: out.baseAddress! + batch.starts[b] * width)
                }
                // Views hold pointers into each sequence's block table: build them inside its scope.
                func attend(_ b: Int, _ queries: [DecodeAttention.Query]) {
                    if b == ids.count {
                        DecodeAttention.attend(
                            queries, heads: configuration.heads, keyValueHeads: configuration.keyValueHeads,
                            headSize: configuration.headSize, threads: threads)
                        return
                    }
                    guard batch.lengths[b] > 0 && !prefill[b] else { return attend(b + 1, queries) }
                    cache.withView(ids[b], layer: index) { view in
                        var more = queries
                        for row in batch.starts[b]..<(batch.starts[b] + batch.lengths[b]) {
                            more.append(
                                DecodeAttention.Query(
                                    query: q.baseAddress! + row * stride, keyValues: view,
                                    length: batch.positions[row] + 1, output: out.baseAddress! + row * width))
                        }
                        attend(b + 1, more)
                    }
                }
                attend(0, [])
            }
        }
        var h = layer.attentionOutput.apply(context, threads: threads)
        Kernels.add(&h, x)
        let normalizedH = Self.rmsNorm(h, weight: layer.feedForwardNorm, epsilon: configuration.rmsEpsilon)
        let gateUp = layer.gateUp.apply(normalizedH, threads: threads)
        var activation = Tensor(zeros: [rows, configuration.feedForwardWidth])
        swiGLU(gateUp, into: &activation, rows: rows)
        var output = layer.down.apply(activation, threads: threads)
        Kernels.add(&output, h)
        return output
    }

    /// Prompt rows whose prefill keeps the serial path's bits when it starts at a multiple of
    /// this many and every chunk but the last is one too: the serial prefill's sgemm blocks
    /// (``attentionBlockRows``) then have the same shapes, and the same sums.
    package static var promptAlignment: Int { attentionBlockRows }

    /// Causal grouped-query attention of `rows` prompt rows (their queries from `q`, rows
    /// `qkvStride` apart; keys and values `[past + rows, keyValueWidth]`, contiguous) into `out`
    /// (`[rows, width]`), by the same sgemms on the same shapes as ``LlamaKVCache``'s prefill
    /// (`LlamaModel+Forward.swift`): per head, blocks of ``attentionBlockRows`` query rows, each
    /// scoring every key up to its last row, masked, softmaxed, then times V. Summing the same
    /// terms in the same order is what gives a batched prompt the serial path's bits. The serial
    /// prefill calls it too, so there is one copy of the sums to keep identical.
    func attendPrompt(
        q: UnsafePointer<Float>, qkvStride: Int, rows newRows: Int, past: Int, keys: [Float], values: [Float],
        into out: UnsafeMutablePointer<Float>
    ) {
        let d = configuration.headSize
        let width = configuration.width
        let keyValueWidth = configuration.keyValueWidth
        let total = past + newRows
        let blockRows = min(newRows, Self.attentionBlockRows)
        var scores = [Float](repeating: 0, count: blockRows * total)
        keys.withUnsafeBufferPointer { keys in
            values.withUnsafeBufferPointer { values in
                scores.withUnsafeMutableBufferPointer { s in
                    for head in 0..<configuration.heads {
                        let kv = head / configuration.groupSize
                        for start in stride(from: 0, to: newRows, by: blockRows) {
                            let rows = min(blockRows, newRows - start)
                            let seen = past + start + rows
                            BLAS.sgemm(
                                m: rows, n: seen, k: d, a: q + start * qkvStride + head * d, lda: qkvStride,
                                b: keys.baseAddress! + kv * d, ldb: keyValueWidth, transposeB: true,
                                c: s.baseAddress!, ldc: seen, alpha: 1 / Float(d).squareRoot())
                            for i in 0..<rows {
                                Self.causalSoftmax(s.baseAddress! + i * seen, valid: past + start + i + 1, count: seen)
                            }
                            BLAS.sgemm(
                                m: rows, n: d, k: seen, a: s.baseAddress!, lda: seen,
                                b: values.baseAddress! + kv * d, ldb: keyValueWidth,
                                c: out + start * width + head * d, ldc: width)
                        }
                    }
                }
            }
        }
    }
}
