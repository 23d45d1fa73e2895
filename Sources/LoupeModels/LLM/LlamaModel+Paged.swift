import CKernels
import LoupeTensor

extension LlamaModel {
    /// Reads new tokens for several sequences of a ``PagedKVCache`` in one pass over the weights:
    /// sequence `ids[b]`'s `tokens[b]` go after the rows it holds. A batch of decode steps (one
    /// token each, every sequence at its own position), a chunk of a joining sequence's prefill,
    /// or a mix: every row is packed into one matrix, so each projection reads the weights once.
    ///
    /// Every row attends through ``DecodeAttention`` (all the pass's rows in one call), as on the
    /// serial ``LlamaKVCache``, so a sequence's logits do not depend on what it was batched with
    /// nor on how its prompt was chunked: with a ``PagedKVPrecision/f32`` cache and a q8 model
    /// (whose products are integer sums per row) they have the serial path's bits; an f16 cache
    /// only comes near them.
    ///
    /// A model carrying a residual hook (``hooked(_:)``: steering, ablation) runs it here as the
    /// contiguous forward does, after the same layer, on every sequence's new rows packed in
    /// order with their own positions: a hook that edits each row alone (a steering direction)
    /// gives each sequence the bits it gets alone.
    ///
    /// `everyRow` names sequences (by their index in `ids`) whose every new row's logits are
    /// wanted when `logits` is `.last` (a speculative draft's verification beside plain decode
    /// steps and prompt chunks); the head reads only the rows asked for.
    ///
    /// - Returns: per sequence, its logits as `logits` (and `everyRow`) asks.
    /// - Throws: ``ModelError`` for an unknown id, a token outside the vocabulary, or a full pool
    ///   (before any row is written; blocks reserved for earlier sequences of the call stay reserved).
    package func forward(
        _ tokens: [[Int32]], sequences ids: [Int], cache: PagedKVCache, logits: LlamaLogits = .last,
        everyRow: Set<Int> = []
    ) throws(ModelError) -> [Tensor] {
        precondition(tokens.count == ids.count, "\(tokens.count) token lists for \(ids.count) sequences")
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
        var x = embed(batch)
        for (index, layer) in layers.enumerated() {
            x = run(layer, index: index, on: x, batch: batch, ids: ids, cache: cache)
            runHook(after: index, on: &x, positions: batch.positions)
        }
        for b in ids.indices {
            do { try cache.commit(ids[b], tokens: tokens[b]) } catch {
                throw ModelError(file: fileName, message: "sequence \(ids[b]): \(error)")
            }
        }
        guard logits == .last, !everyRow.isEmpty else { return project(x, batch: batch, logits: logits, profile: nil) }
        // The rows the head reads: all of a sequence in `everyRow`, the last of the others.
        // Each row's logits are its own (one row, one answer), so choosing rows moves no bit.
        let width = configuration.width
        var chosen: [[Int32]] = []
        var rows: [Int] = []
        for b in ids.indices {
            let range = batch.starts[b]..<(batch.starts[b] + batch.lengths[b])
            let kept = everyRow.contains(b) ? Array(range) : range.last.map { [$0] } ?? []
            chosen.append(kept.map { batch.tokens[$0] })
            rows += kept
        }
        var selected = Tensor(zeros: [rows.count, width])
        for (index, row) in rows.enumerated() {
            selected.storage.replaceSubrange(
                (index * width)..<((index + 1) * width), with: x.storage[(row * width)..<((row + 1) * width)])
        }
        return project(selected, batch: Batch(tokens: chosen, past: past), logits: .all, profile: nil)
    }

    /// One decoder block over all rows against the paged cache.
    private func run(
        _ layer: Layer, index: Int, on x: Tensor, batch: Batch, ids: [Int], cache: PagedKVCache
    ) -> Tensor {
        let width = configuration.width
        let keyValueWidth = configuration.keyValueWidth
        let rows = batch.rows
        let normalized = Self.rmsNorm(
            x, weight: layer.attentionNorm, epsilon: configuration.rmsEpsilon, threads: threads)
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
                // Views hold pointers into each sequence's block table: build them inside its scope.
                func attend(_ b: Int, _ queries: [DecodeAttention.Query]) {
                    if b == ids.count {
                        DecodeAttention.attend(
                            queries, heads: configuration.heads, keyValueHeads: configuration.keyValueHeads,
                            headSize: configuration.headSize, threads: threads)
                        return
                    }
                    guard batch.lengths[b] > 0 else { return attend(b + 1, queries) }
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
        let normalizedH = Self.rmsNorm(
            h, weight: layer.feedForwardNorm, epsilon: configuration.rmsEpsilon, threads: threads)
        let gateUp = layer.gateUp.apply(normalizedH, threads: threads)
        var activation = Tensor(zeros: [rows, configuration.feedForwardWidth])
        swiGLU(gateUp, into: &activation, rows: rows)
        var output = layer.down.apply(activation, threads: threads)
        Kernels.add(&output, h)
        return output
    }
}
