import CKernels
import Foundation
import LoupeBase
import LoupeTensor

/// Which positions of a forward pass get logits.
package enum LlamaLogits: Sendable, Equatable {
    /// Each sequence's last new token only (generation): one `[1, vocabulary]` row per sequence.
    case last
    /// Every new token (teacher forcing, prompt logprobs): `[new tokens, vocabulary]`.
    case all
}

extension LlamaModel {
    /// Every position's logits for `ids` read from the start: `[ids.count, vocabulary]`, row t
    /// the distribution of the token after `ids[t]` (teacher forcing).
    ///
    /// - Throws: ``ModelError`` for an id outside the vocabulary or more ids than the model's
    ///   context.
    package func logits(for ids: [Int32]) throws(ModelError) -> Tensor {
        var cache = try makeCache(context: min(max(ids.count, 1), configuration.contextLength))
        guard ids.count <= cache.capacity else {
            throw ModelError(
                file: fileName,
                message: "a sequence of \(ids.count) tokens is longer than the model's context of \(cache.capacity)")
        }
        return try forward(ids, cache: &cache, logits: .all)
    }

    /// Reads `tokens` after what `cache` holds (a prefill of many tokens, or one decode step) and
    /// returns the logits `logits` asks for.
    package func forward(
        _ tokens: [Int32], cache: inout LlamaKVCache, logits: LlamaLogits = .last, profile: OperationProfile? = nil
    ) throws(ModelError) -> Tensor {
        var caches = [cache]
        cache = LlamaKVCache(layers: 0, keyValueWidth: 0, capacity: 0)  // the one copy lives in `caches`
        defer { cache = caches[0] }
        return try forward([tokens], caches: &caches, logits: logits, profile: profile)[0]
    }

    /// Reads new tokens for several sequences in one pass: sequence b's `tokens[b]` go after what
    /// `caches[b]` holds, at its next positions.
    ///
    /// All the sequences' new tokens are packed into the rows of one matrix (no padding), so each
    /// projection is one sgemm over every row: a batch of prefills of different lengths, a batch
    /// of decode steps (one token each), or a mix. Attention runs per sequence and head against
    /// that sequence's own cache. A sequence with no new tokens is left as it is and gets a
    /// `[0, vocabulary]` tensor.
    ///
    /// With `profile`, each operation (named in ``LlamaModel/Operation``) is timed and its analytic
    /// FLOPs and bytes added (see `LlamaModel+Cost.swift`), each layer a scope: what the Roofline
    /// panel places.
    ///
    /// - Returns: per sequence, its logits as `logits` asks (`[1 or count, vocabulary]`).
    /// - Throws: ``ModelError`` for an id outside the vocabulary or more tokens than a cache has
    ///   room for, before any cache changes.
    package func forward(
        _ tokens: [[Int32]], caches: inout [LlamaKVCache], logits: LlamaLogits = .last,
        profile: OperationProfile? = nil
    ) throws(ModelError) -> [Tensor] {
        precondition(tokens.count == caches.count, "\(tokens.count) sequences for \(caches.count) caches")
        let vocabulary = configuration.vocabularySize
        for (b, ids) in tokens.enumerated() {
            precondition(
                caches[b].keys.count == configuration.layers && caches[b].keyValueWidth == configuration.keyValueWidth,
                "sequence \(b)'s cache was made for another model")
            if let bad = ids.first(where: { $0 < 0 || Int($0) >= vocabulary }) {
                throw ModelError(
                    file: fileName,
                    message: "sequence \(b): token id \(bad) is outside the vocabulary (0..<\(vocabulary))")
            }
            guard ids.count <= caches[b].remaining else {
                throw ModelError(
                    file: fileName,
                    message:
                        "sequence \(b): \(ids.count) new tokens after \(caches[b].count) do not fit its context of "
                        + "\(caches[b].capacity) tokens")
            }
        }
        let batch = Batch(tokens: tokens, caches: caches)
        let angles = RotaryAngles(positions: batch.positions, configuration: configuration)
        var x = OperationProfile.measure(profile, Operation.embedding.rawValue, embeddingCost(rows: batch.rows)) {
            embed(batch)
        }
        for (index, layer) in layers.enumerated() {
            x = OperationProfile.scope(profile, "layer \(index)") {
                run(layer, index: index, on: x, batch: batch, angles: angles, caches: &caches, profile: profile)
            }
            runHook(after: index, on: &x, positions: batch.positions)
        }
        for b in caches.indices { caches[b].advance(by: tokens[b].count) }
        return project(x, batch: batch, logits: logits, profile: profile)
    }

    /// Where each sequence's new tokens sit among the packed rows, and their positions.
    struct Batch {
        /// Sequence b's rows: `starts[b] ..< starts[b] + lengths[b]`.
        var starts: [Int]
        var lengths: [Int]
        /// What each cache held before this pass: the position of the sequence's first new token.
        var past: [Int]
        var tokens: [Int32]
        /// Each row's position in its sequence.
        var positions: [Int]
        var rows: Int { tokens.count }

        /// The packed rows of `tokens`, sequence b's first new token at position `past[b]`.
        init(tokens: [[Int32]], past: [Int]) {
            lengths = tokens.map(\.count)
            self.past = past
            starts = []
            self.tokens = []
            positions = []
            for (b, ids) in tokens.enumerated() {
                starts.append(self.tokens.count)
                self.tokens += ids
                positions += (0..<ids.count).map { past[b] + $0 }
            }
        }

        init(tokens: [[Int32]], caches: [LlamaKVCache]) {
            self.init(tokens: tokens, past: caches.map(\.count))
        }
    }

    /// The embedding rows of the batch's tokens: `[rows, width]`, dequantized from the tied
    /// head's copy when there is one (``embeddingCopy``), from the file otherwise: the same bits.
    func embed(_ batch: Batch) -> Tensor {
        let width = configuration.width
        var x = Tensor(zeros: [batch.rows, width])
        x.storage.withUnsafeMutableBufferPointer { out in
            for (row, id) in batch.tokens.enumerated() {
                if let embeddingCopy {
                    embeddingCopy.dequantizeRow(Int(id), into: out.baseAddress! + row * width)
                } else {
                    file.dequantizeRow(embeddingTensor, row: Int(id), into: out.baseAddress! + row * width)
                }
            }
        }
        return x
    }

    /// One decoder block over all rows: `h = x + attention(…)`, then `h + FFN(…)`. The residual
    /// stream in and out is `[rows, width]`.
    private func run(
        _ layer: Layer, index: Int, on x: Tensor, batch: Batch, angles: RotaryAngles, caches: inout [LlamaKVCache],
        profile: OperationProfile?
    ) -> Tensor {
        let width = configuration.width
        let rows = batch.rows
        let normCost = rmsNormCost(rows: rows)
        let normalized = OperationProfile.measure(profile, Operation.rmsNorm.rawValue, normCost) {
            Self.rmsNorm(x, weight: layer.attentionNorm, epsilon: configuration.rmsEpsilon, threads: threads)
        }
        var qkv = OperationProfile.measure(
            profile, Operation.queryKeyValue.rawValue, layer.queryKeyValue.cost(tokens: rows)
        ) { layer.queryKeyValue.apply(normalized, threads: threads) }
        OperationProfile.measure(profile, Operation.rope.rawValue, ropeCost(rows: rows)) {
            applyRoPE(&qkv, angles: angles)
        }
        let stride = qkv.columns
        OperationProfile.measure(profile, Operation.cacheAppend.rawValue, cacheAppendCost(rows: rows)) {
            qkv.storage.withUnsafeBufferPointer { rows in
                for b in caches.indices where batch.lengths[b] > 0 {
                    caches[b].append(
                        rows: rows.baseAddress! + batch.starts[b] * stride + width, count: batch.lengths[b],
                        stride: stride, layer: index)
                }
            }
        }
        var context = Tensor(zeros: [batch.rows, width])
        OperationProfile.measure(profile, Operation.attention.rawValue, attentionCost(batch)) {
            for b in caches.indices where batch.lengths[b] > 0 {
                attend(qkv: qkv, sequence: b, batch: batch, cache: caches[b], layer: index, into: &context)
            }
        }
        var h = OperationProfile.measure(
            profile, Operation.attentionOutput.rawValue, layer.attentionOutput.cost(tokens: rows)
        ) { layer.attentionOutput.apply(context, threads: threads) }
        let addCost = KernelCost.add(count: rows * width)
        OperationProfile.measure(profile, Operation.residual.rawValue, addCost) { Kernels.add(&h, x) }
        let normalizedH = OperationProfile.measure(profile, Operation.rmsNorm.rawValue, normCost) {
            Self.rmsNorm(h, weight: layer.feedForwardNorm, epsilon: configuration.rmsEpsilon, threads: threads)
        }
        var output = feedForward(layer, normalizedH, profile: profile)
        OperationProfile.measure(profile, Operation.residual.rawValue, addCost) { Kernels.add(&output, h) }
        return output
    }

    /// `down(silu(gate) ⊙ up)` of the normalized rows, a prompt's rows ``feedForwardRows`` at a
    /// time: the gate·up and SwiGLU outputs, 4.5 times the width of the residual stream, were
    /// 9.4 MB for a 512-token prefill, which set the engine's peak RSS; a block of 128 rows holds
    /// 2.4 MB. Every row's products and SwiGLU are its own, so the blocks change no bit.
    private func feedForward(_ layer: Layer, _ normalized: Tensor, profile: OperationProfile?) -> Tensor {
        let rows = normalized.rows
        let width = configuration.width
        let hidden = configuration.feedForwardWidth
        func block(_ input: Tensor) -> Tensor {
            let count = input.rows
            let gateUp = OperationProfile.measure(
                profile, Operation.gateUp.rawValue, layer.gateUp.cost(tokens: count)
            ) { layer.gateUp.apply(input, threads: threads) }
            var activation = Tensor(zeros: [count, hidden])
            OperationProfile.measure(profile, Operation.swiGLU.rawValue, swiGLUCost(rows: count)) {
                swiGLU(gateUp, into: &activation, rows: count)
            }
            return OperationProfile.measure(profile, Operation.down.rawValue, layer.down.cost(tokens: count)) {
                layer.down.apply(activation, threads: threads)
            }
        }
        guard rows > Self.feedForwardRows else { return block(normalized) }
        var output = Tensor(zeros: [rows, width])
        for start in stride(from: 0, to: rows, by: Self.feedForwardRows) {
            let count = min(Self.feedForwardRows, rows - start)
            let input = Tensor(
                shape: [count, width], storage: Array(normalized.storage[(start * width)..<((start + count) * width)]))
            let part = block(input)
            output.storage.replaceSubrange((start * width)..<((start + count) * width), with: part.storage)
        }
        return output
    }

    /// The most rows one feed-forward block multiplies at once (see ``feedForward(_:_:profile:)``):
    /// enough for the tiled products to reuse each weight vector across many tokens.
    static let feedForwardRows = 128

    /// `silu(gate) ⊙ up` for each row of the fused gate·up output `[rows, 2 · hidden]`, the rows
    /// split over ``threads`` (``elementwiseRows``): each element is computed alone, so the split
    /// changes no bit.
    ///
    /// `loupe_swiglu` (`Sources/CKernels/swiglu.c`) computes `g / (1 + e^(−g)) · u` with glibc's
    /// expf arithmetic in vectors: the bits of the scalar loop over `Foundation.exp` it replaced,
    /// which took 0.16 ms of an 8 ms decode step (a libm call and a division an element; 0.04 ms
    /// now, one thread).
    func swiGLU(_ gateUp: Tensor, into activation: inout Tensor, rows: Int) {
        let hidden = configuration.feedForwardWidth
        gateUp.storage.withUnsafeBufferPointer { gu in
            activation.storage.withUnsafeMutableBufferPointer { out in
                CPUKernels.splitRows(rows, threads: threads, granularity: Self.elementwiseRows) { start, count in
                    for row in start..<(start + count) {
                        let gate = gu.baseAddress! + row * 2 * hidden
                        loupe_swiglu(hidden, gate, gate + hidden, out.baseAddress! + row * hidden, LOUPE_ISA_AVX512)
                    }
                }
            }
        }
    }

    /// The fewest rows a thread takes in the row-wise steps (RMSNorm, RoPE, SwiGLU): a decode
    /// step's few rows stay on one thread, where waking another costs more than it saves, while a
    /// prompt's hundreds split. At 2 threads these steps were the prefill's serial part (SwiGLU's
    /// exponentials alone 9% of a 512-token prefill's samples in `perf`), which held 2 threads to
    /// 1.3× one.
    static let elementwiseRows = 16

    /// Causal grouped-query attention of sequence `b`'s new rows against its cache (which already
    /// holds their keys and values), written into their rows of `context` `[rows, width]`.
    ///
    /// Every row goes to ``DecodeAttention``, a decode step's single row and a prompt's many
    /// alike: row r attends to the cache's first `past + r + 1` keys exactly as a decode step at
    /// its position would, so a prefill (or a speculative draft's verification) gives each row
    /// the bits that feeding the tokens one at a time gives. Per-head sgemms over a block of rows
    /// summed in other orders (and in OpenBLAS's per-CPU kernels), which q8's 8-bit activations
    /// amplified into other greedy answers.
    private func attend(
        qkv: Tensor, sequence b: Int, batch: Batch, cache: LlamaKVCache, layer: Int, into context: inout Tensor
    ) {
        let width = configuration.width
        let keyValueWidth = configuration.keyValueWidth
        let qkvStride = qkv.columns
        cache.keys[layer].withUnsafeBufferPointer { keys in
            cache.values[layer].withUnsafeBufferPointer { values in
                qkv.storage.withUnsafeBufferPointer { q in
                    context.storage.withUnsafeMutableBufferPointer { out in
                        let view = loupe_kv_view(
                            keys: keys.baseAddress, values: values.baseAddress, blocks: nil, block_rows: 0,
                            block_stride: 0, row_stride: keyValueWidth, type: LOUPE_KV_F32)
                        let queries = (batch.starts[b]..<(batch.starts[b] + batch.lengths[b])).map { row in
                            DecodeAttention.Query(
                                query: q.baseAddress! + row * qkvStride, keyValues: view,
                                length: batch.positions[row] + 1, output: out.baseAddress! + row * width)
                        }
                        DecodeAttention.attend(
                            queries, heads: configuration.heads, keyValueHeads: configuration.keyValueHeads,
                            headSize: configuration.headSize, threads: threads)
                    }
                }
            }
        }
    }

    /// Query rows whose scores the glass-box probe (`LlamaModel+Probe.swift`) computes at once:
    /// the scores of a block (`[rows, keys]`) stay small (1 MB at 8192 keys) however long the
    /// text, and each block skips the keys after its last row.
    static let attentionBlockRows = 32

    /// Softmax over the first `valid` of `count` scores; the rest (future positions) become 0.
    static func causalSoftmax(_ scores: UnsafeMutablePointer<Float>, valid: Int, count: Int) {
        var top = -Float.infinity
        for j in 0..<valid { top = max(top, scores[j]) }
        var sum: Float = 0
        for j in 0..<valid {
            let e = Foundation.exp(scores[j] - top)
            scores[j] = e
            sum += e
        }
        let scale = 1 / sum
        for j in 0..<valid { scores[j] *= scale }
        for j in valid..<count { scores[j] = 0 }
    }

    /// RoPE in llama.cpp's NORM mode on the Q and K columns of the fused Q·K·V rows: within each
    /// head, the pair (2i, 2i + 1) for i < ropeDimensions / 2 turns by position · base^(−2i / n).
    /// The angles are computed in double and rounded once, as the numpy reference does.
    func applyRoPE(_ qkv: inout Tensor, positions: [Int]) {
        applyRoPE(&qkv, angles: RotaryAngles(positions: positions, configuration: configuration))
    }

    /// ``applyRoPE(_:positions:)`` with the rows' angles computed once for every layer of a pass
    /// (a decode step's 64 sines and cosines were computed 30 times over, with the frequencies).
    func applyRoPE(_ qkv: inout Tensor, angles: RotaryAngles) {
        let d = configuration.headSize
        let pairs = angles.pairs
        let stride = qkv.columns
        let rotatedHeads = configuration.heads + configuration.keyValueHeads  // Q's heads, then K's
        qkv.storage.withUnsafeMutableBufferPointer { values in
            angles.cosines.withUnsafeBufferPointer { cosines in
                angles.sines.withUnsafeBufferPointer { sines in
                    CPUKernels.splitRows(angles.rows, threads: threads, granularity: Self.elementwiseRows) {
                        start, count in
                        for row in start..<(start + count) {
                            let cosine = cosines.baseAddress! + row * pairs
                            let sine = sines.baseAddress! + row * pairs
                            for head in 0..<rotatedHeads {
                                let v = values.baseAddress! + row * stride + head * d
                                for i in 0..<pairs {
                                    let even = v[2 * i]
                                    let odd = v[2 * i + 1]
                                    v[2 * i] = even * cosine[i] - odd * sine[i]
                                    v[2 * i + 1] = even * sine[i] + odd * cosine[i]
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Each row's RoPE angles, `position · base^(−2i / n)` for each pair i, computed in double
    /// and rounded once (as the numpy reference does): `[rows][pairs]` cosines and sines.
    struct RotaryAngles {
        let rows: Int
        let pairs: Int
        var cosines: [Float] = []
        var sines: [Float] = []

        init(positions: [Int], configuration: LlamaConfiguration) {
            rows = positions.count
            pairs = configuration.ropeDimensions / 2
            let base = Double(configuration.ropeBase)
            let pairs = pairs
            let frequencies = (0..<pairs).map { Foundation.pow(base, -Double(2 * $0) / Double(2 * pairs)) }
            cosines.reserveCapacity(rows * pairs)
            sines.reserveCapacity(rows * pairs)
            for position in positions {
                for i in 0..<pairs {
                    let angle = Double(position) * frequencies[i]
                    cosines.append(Float(Foundation.cos(angle)))
                    sines.append(Float(Foundation.sin(angle)))
                }
            }
        }
    }

    /// RMSNorm of every row, `x / √(mean(x²) + ε) · weight`, the mean of squares summed in double;
    /// the rows split over `threads` (each row alone, so the split changes no bit).
    static func rmsNorm(_ x: Tensor, weight: [Float], epsilon: Float, threads: Int = 1) -> Tensor {
        let columns = x.columns
        precondition(weight.count == columns, "RMSNorm weight of \(weight.count) for rows of \(columns)")
        var out = x
        let rows = x.storage.count / max(1, columns)
        out.storage.withUnsafeMutableBufferPointer { values in
            weight.withUnsafeBufferPointer { g in
                CPUKernels.splitRows(rows, threads: threads, granularity: elementwiseRows) { start, count in
                    for row in start..<(start + count) {
                        let v = values.baseAddress! + row * columns
                        var squares: Double = 0
                        for j in 0..<columns { squares += Double(v[j]) * Double(v[j]) }
                        let scale = Float(1 / (squares / Double(columns) + Double(epsilon)).squareRoot())
                        for j in 0..<columns { v[j] = v[j] * scale * g[j] }
                    }
                }
            }
        }
        return out
    }

    /// The final RMSNorm and the head on the rows `logits` asks for, split per sequence.
    func project(_ x: Tensor, batch: Batch, logits: LlamaLogits, profile: OperationProfile?) -> [Tensor] {
        let width = configuration.width
        var selected: [Int] = []
        var counts: [Int] = []
        for b in batch.lengths.indices {
            let rows = batch.starts[b]..<(batch.starts[b] + batch.lengths[b])
            let chosen = logits == .all ? Array(rows) : rows.last.map { [$0] } ?? []
            selected += chosen
            counts.append(chosen.count)
        }
        var gathered = Tensor(zeros: [selected.count, width])
        for (index, row) in selected.enumerated() {
            gathered.storage.replaceSubrange(
                (index * width)..<((index + 1) * width), with: x.storage[(row * width)..<((row + 1) * width)])
        }
        let normalized = OperationProfile.measure(
            profile, Operation.rmsNorm.rawValue, rmsNormCost(rows: selected.count)
        ) { Self.rmsNorm(gathered, weight: outputNorm, epsilon: configuration.rmsEpsilon) }
        let all = OperationProfile.measure(profile, Operation.head.rawValue, head.cost(tokens: selected.count)) {
            head.apply(normalized, threads: threads)
        }
        let vocabulary = configuration.vocabularySize
        var results: [Tensor] = []
        var offset = 0
        for count in counts {
            results.append(
                Tensor(
                    shape: [count, vocabulary],
                    storage: Array(all.storage[(offset * vocabulary)..<((offset + count) * vocabulary)])))
            offset += count
        }
        return results
    }
}
