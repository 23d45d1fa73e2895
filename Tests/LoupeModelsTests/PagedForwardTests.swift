import Foundation
import LoupeModels
import LoupeTensor
import Testing

/// Batched decoding over the paged key/value cache against each sequence decoded alone, and
/// against the float reference's greedy answer. Needs the model (`scripts/fetch-smollm2`).
@Suite(.serialized)
struct PagedForwardTests {
    static let prompts: [[Int32]] = [
        LlamaForwardTests.france,
        Array(LlamaForwardTests.france.prefix(20)) + [198, 1, 4093, 198, 19556, 47, 2, 198, 1, 520, 9531, 198],
        [1, 4093, 198, 28120, 905, 2, 198, 1, 520, 9531, 198],
        Array(LlamaForwardTests.france.prefix(30)) + [2, 198, 1, 520, 9531, 198],
    ]
    static let steps = 6

    static func argmax(_ logits: Tensor) -> Int32 {
        Int32(logits.storage.indices.max { logits.storage[$0] < logits.storage[$1] }!)
    }

    static func cache(_ model: LlamaModel) -> PagedKVCache {
        PagedKVCache(
            layers: model.configuration.layers, rowWidth: model.configuration.keyValueWidth, blockCount: 64,
            blockRows: 16)
    }

    /// Greedy tokens and each step's logits of `prompt` decoded alone.
    static func alone(_ model: LlamaModel, _ prompt: [Int32]) throws -> (tokens: [Int32], logits: [Tensor]) {
        let cache = cache(model)
        #expect(try cache.join(0, prompt: prompt) == 0)
        var logits = try model.forward([prompt], sequences: [0], cache: cache)
        var tokens: [Int32] = []
        var all: [Tensor] = []
        for _ in 0..<steps {
            all.append(logits[0])
            tokens.append(argmax(logits[0]))
            logits = try model.forward([[tokens.last!]], sequences: [0], cache: cache)
        }
        return (tokens, all)
    }

    static func expectClose(_ a: Tensor, _ b: Tensor, _ comment: Comment) {
        // Agreement to 1e-3 of the largest logit (the bits themselves: PagedSerialParityTests).
        let worst = zip(a.storage, b.storage).map { abs($0 - $1) }.max() ?? .infinity
        let scale = b.storage.map { abs($0) }.max() ?? 0
        #expect(
            a.storage.count == b.storage.count && worst <= 1e-3 * scale,
            "\(comment): logits differ by \(worst) (largest \(scale))")
    }

    @Test func theFrancePromptDecodedPagedGivesTheReferenceAnswer() throws {
        let model = try SmolLM2.model()
        let result = try Self.alone(model, LlamaForwardTests.france)
        #expect(result.tokens == Array(LlamaForwardTests.franceAnswer.prefix(Self.steps)))
    }

    @Test func fourPromptsBatchedMatchEachDecodedAlone() throws {
        let model = try SmolLM2.model()
        let alone = try Self.prompts.map { try Self.alone(model, $0) }
        let cache = Self.cache(model)
        // Distinct ids; no sharing wanted here, so the prompts join before any is stored.
        for (id, prompt) in Self.prompts.enumerated() { #expect(try cache.join(id, prompt: prompt) == 0) }
        var logits = try model.forward(Self.prompts, sequences: [0, 1, 2, 3], cache: cache)
        var tokens = [[Int32]](repeating: [], count: 4)
        for step in 0..<Self.steps {
            for b in 0..<4 {
                Self.expectClose(logits[b], alone[b].logits[step], "prompt \(b), step \(step)")
                tokens[b].append(Self.argmax(logits[b]))
            }
            logits = try model.forward(tokens.map { [$0.last!] }, sequences: [0, 1, 2, 3], cache: cache)
        }
        #expect(tokens == alone.map { $0.tokens })
    }

    @Test func sequencesJoinInChunksAndLeaveMidBatchAndShareAPrefix() throws {
        let model = try SmolLM2.model()
        let first = try Self.alone(model, Self.prompts[0])
        let last = try Self.alone(model, Self.prompts[3])
        let cache = Self.cache(model)
        _ = try cache.join(0, prompt: Self.prompts[0])
        var logits = try model.forward([Self.prompts[0]], sequences: [0], cache: cache)
        var tokens: [Int32] = [Self.argmax(logits[0])]
        // Sequence 3 shares the system prompt's first block (16 tokens) and prefills the rest in
        // chunks of 8 rows, each in the same pass as sequence 0's decode step.
        let cached = try cache.join(3, prompt: Self.prompts[3])
        #expect(cached == 16, "the shared prefix block is reused, not recomputed")
        var rest = Array(Self.prompts[3][cached...] as ArraySlice<Int32>)
        var joined: [Int32] = []
        var step = 1
        while joined.count < Self.steps {
            var batchTokens: [[Int32]] = []
            var ids: [Int] = []
            if tokens.count < 4 {
                batchTokens.append([tokens.last!])
                ids.append(0)
            } else if cache.sequences[0] != nil {
                try cache.leave(0)  // sequence 0 leaves mid-batch
            }
            if !rest.isEmpty {
                batchTokens.append(Array(rest.prefix(8)))
                rest.removeFirst(min(8, rest.count))
            } else {
                batchTokens.append([joined.last!])
            }
            ids.append(3)
            logits = try model.forward(batchTokens, sequences: ids, cache: cache)
            if ids.count == 2 {
                Self.expectClose(logits[0], first.logits[step], "sequence 0, step \(step)")
                tokens.append(Self.argmax(logits[0]))
                step += 1
            }
            if rest.isEmpty && (batchTokens.last!.count > 1 || !joined.isEmpty || ids.count == 1) {
                Self.expectClose(logits.last!, last.logits[joined.count], "sequence 3, step \(joined.count)")
                joined.append(Self.argmax(logits.last!))
            }
        }
        #expect(Array(tokens.prefix(4)) == Array(first.tokens.prefix(4)))
        #expect(joined == last.tokens)
        try cache.leave(3)
        #expect(cache.allocator.freeCount == 64)
    }
}

/// The paged path against the serial ``LlamaKVCache`` on the q8 model `loupe serve` runs: with
/// an f32 pool a sequence's logits have the same bits whatever it is batched with and however
/// its prompt is chunked (a prompt row attends as a decode step does on both paths), which is what lets the batched scheduler be the server's default
/// (docs/decisions/2026-11-29-batched-serving-by-default.md). Needs the model.
@Suite(.serialized)
struct PagedSerialParityTests {
    static let steps = 8

    /// Greedy logits of `prompt` on the serial cache: one prefill, then one token a step.
    static func serial(_ model: LlamaModel, _ prompt: [Int32]) throws -> [[Float]] {
        var cache = try model.makeCache(context: prompt.count + steps)
        var logits = try model.forward(prompt, cache: &cache, logits: .last)
        var all: [[Float]] = []
        for _ in 0..<steps {
            all.append(logits.storage)
            logits = try model.forward([PagedForwardTests.argmax(logits)], cache: &cache, logits: .last)
        }
        return all
    }

    /// Greedy logits of `prompt` read in chunks of 9 on a paged cache beside another sequence's
    /// decode steps, as `BatchScheduler` feeds it: the prompt's last chunk's, then each step's.
    static func chunkedBesideAnother(_ model: LlamaModel, _ prompt: [Int32]) throws -> [[Float]] {
        let cache = PagedKVCache(
            layers: model.configuration.layers, rowWidth: model.configuration.keyValueWidth, blockCount: 64,
            blockRows: 16)
        let other = PagedForwardTests.prompts[2]
        _ = try cache.join(0, prompt: other)
        _ = try cache.join(1, prompt: prompt)
        var next0 = PagedForwardTests.argmax(try model.forward([other], sequences: [0], cache: cache)[0])
        var pending = prompt[...]
        var logits: [[Float]] = []
        var next1: Int32?
        while logits.count < steps {
            let piece = next1.map { [$0] } ?? Array(pending.prefix(9))
            pending = pending.dropFirst(piece.count)
            let out = try model.forward([[next0], piece], sequences: [0, 1], cache: cache)
            next0 = PagedForwardTests.argmax(out[0])
            if next1 != nil || pending.isEmpty {
                logits.append(out[1].storage)
                next1 = PagedForwardTests.argmax(out[1])
            }
        }
        return logits
    }

    /// Greedy logits of all `prompts` decoded together on a paged cache of `precision`, each
    /// prompt fed in chunks of `chunk` rows beside the others' decode steps, the way
    /// `BatchScheduler` feeds them.
    static func batched(
        _ model: LlamaModel, _ prompts: [[Int32]], chunk: Int, precision: PagedKVPrecision
    ) throws -> [[[Float]]] {
        let cache = PagedKVCache(
            layers: model.configuration.layers, rowWidth: model.configuration.keyValueWidth, blockCount: 128,
            blockRows: 16, precision: precision)
        var pending: [ArraySlice<Int32>] = []
        for (id, prompt) in prompts.enumerated() {
            let cached = try cache.join(id, prompt: prompt)
            pending.append(prompt[cached...])
        }
        var next = [Int32?](repeating: nil, count: prompts.count)
        var logits = [[[Float]]](repeating: [], count: prompts.count)
        while logits.contains(where: { $0.count < steps }) {
            var ids: [Int] = []
            var tokens: [[Int32]] = []
            for id in prompts.indices where logits[id].count < steps {
                ids.append(id)
                if pending[id].isEmpty {
                    tokens.append([next[id]!])
                } else {
                    tokens.append(Array(pending[id].prefix(chunk)))
                    pending[id] = pending[id].dropFirst(chunk)
                }
            }
            let out = try model.forward(tokens, sequences: ids, cache: cache)
            for (row, id) in ids.enumerated() where pending[id].isEmpty {
                logits[id].append(out[row].storage)
                next[id] = PagedForwardTests.argmax(out[row])
            }
        }
        return logits
    }

    /// The four parity prompts, the last sharing its first block with the first.
    static var prompts: [[Int32]] { PagedForwardTests.prompts }

    /// Any chunking: every prompt row attends as a decode step does, so neither the chunk's
    /// length nor its alignment to the cache's blocks changes a bit (7 and 16 split blocks, and
    /// 128 reads the longest prompt whole).
    @Test(arguments: [7, 16, 32, 128])
    func anF32PoolGivesEachSequenceTheSerialLogitsBitForBit(chunk: Int) throws {
        let model = try SmolLM2.quantizedModel()
        let serial = try Self.prompts.map { try Self.serial(model, $0) }
        let batched = try Self.batched(model, Self.prompts, chunk: chunk, precision: .f32)
        for (index, prompt) in serial.enumerated() {
            for step in 0..<Self.steps {
                let differing = zip(prompt[step], batched[index][step]).filter { $0 != $1 }.count
                #expect(differing == 0, "prompt \(index), step \(step): \(differing) logits differ")
            }
        }
    }

    /// A prompt read in pieces that end anywhere (5, 11 and 3 rows, beside another sequence's
    /// decode steps), after a shared prefix of any whole number of blocks (7 one-row blocks, or
    /// the one 16-row block of a 19-token prefix: neither a multiple of 32), has the logits of
    /// the serial cache's single prefill, bit for bit, and so do its decode steps.
    @Test(arguments: [(blockRows: 1, shared: 7), (blockRows: 16, shared: 19)])
    func aPromptSplitAnywhereAfterAShortSharedPrefixHasTheSinglePrefillsBits(blockRows: Int, shared: Int) throws {
        let model = try SmolLM2.quantizedModel()
        let first = LlamaForwardTests.france
        let tail: [Int32] = [4093, 198, 28120, 905, 2, 198, 1, 4093, 198, 1780, 314, 260, 3575, 282, 4649, 47, 2, 198]
        let second = Array(first.prefix(shared)) + tail
        try #require(second[shared] != first[shared], "the prompts share exactly \(shared) tokens")
        let serial = try Self.serial(model, second)
        let cache = PagedKVCache(
            layers: model.configuration.layers, rowWidth: model.configuration.keyValueWidth, blockCount: 256,
            blockRows: blockRows)
        _ = try cache.join(0, prompt: first)
        var next0 = PagedForwardTests.argmax(try model.forward([first], sequences: [0], cache: cache)[0])
        let cached = try cache.join(1, prompt: second)
        #expect(cached == shared / blockRows * blockRows, "the shared prefix's whole blocks are reused")
        var pending = second[cached...]
        var splits = [5, 11, 3].makeIterator()
        var logits: [[Float]] = []
        var next1: Int32?
        while logits.count < Self.steps {
            let piece: [Int32]
            if let next1 {
                piece = [next1]
            } else {
                let take = splits.next() ?? pending.count
                piece = Array(pending.prefix(take))
                pending = pending.dropFirst(take)
            }
            let out = try model.forward([[next0], piece], sequences: [0, 1], cache: cache)
            next0 = PagedForwardTests.argmax(out[0])
            if pending.isEmpty {
                logits.append(out[1].storage)
                next1 = PagedForwardTests.argmax(out[1])
            }
        }
        for step in 0..<Self.steps {
            let differing = zip(serial[step], logits[step]).filter { $0 != $1 }.count
            #expect(differing == 0, "step \(step): \(differing) logits differ from the single prefill's")
        }
    }

    /// A residual hook (a steering direction added after layer 15) runs on the paged path as on
    /// the contiguous one: the steered logits of a prompt read in chunks beside another sequence
    /// are the contiguous forward's bit for bit (adding a direction edits each row alone), and
    /// not the plain model's.
    @Test func aSteeringHookActsOnThePagedPathAsOnTheContiguousOne() throws {
        let plain = try SmolLM2.quantizedModel()
        let width = plain.configuration.width
        let direction = (0..<width).map { 6 * sin(Float($0) * 0.37) }
        let model = try plain.hooked(
            LlamaResidualHook(layer: 15) { stream, positions in
                for row in positions.indices {
                    for i in 0..<width { stream.storage[row * width + i] += direction[i] }
                }
            })
        try Self.expectPagedAsContiguous(
            model, plain: plain, PagedForwardTests.prompts[1], hook: "hook", rows: "steered")
    }

    /// `model`, `plain` with a hook, read on the paged path (``chunkedBesideAnother(_:_:)``) gives
    /// the logits of its contiguous forward pass (``serial(_:_:)``) bit for bit at every step, and
    /// the hook changes them: `hook` names it, `rows` its logits, in the messages.
    static func expectPagedAsContiguous(
        _ model: LlamaModel, plain: LlamaModel, _ prompt: [Int32], hook: String, rows: String
    ) throws {
        let hooked = try serial(model, prompt)
        let unhooked = try serial(plain, prompt)
        let logits = try chunkedBesideAnother(model, prompt)
        #expect(hooked[0] != unhooked[0], "the \(hook) changes the logits")
        for step in 0..<steps {
            let differing = zip(hooked[step], logits[step]).filter { $0 != $1 }.count
            #expect(differing == 0, "step \(step): \(differing) logits differ from the contiguous \(rows) ones")
        }
    }

    @Test func anF16PoolOnlyComesNear() throws {
        let model = try SmolLM2.quantizedModel()
        let serial = try Self.prompts.map { try Self.serial(model, $0) }
        let batched = try Self.batched(model, Self.prompts, chunk: 128, precision: .f16)
        var worst: Float = 0
        for (index, prompt) in serial.enumerated() {
            for step in 0..<Self.steps {
                let scale = prompt[step].map { abs($0) }.max() ?? 0
                let gap = zip(prompt[step], batched[index][step]).map { abs($0 - $1) }.max() ?? .infinity
                worst = max(worst, gap / scale)
            }
        }
        // Rounding keys and values to halves moves the logits, and q8's 8-bit activations can
        // amplify that (a value crossing a rounding level): measured 9% of the largest logit.
        #expect(worst > 0 && worst < 0.2, "largest difference \(worst) of the largest logit")
    }
}
