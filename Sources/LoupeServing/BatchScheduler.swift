import Dispatch
import Foundation
import LoupeModels
import Synchronization

/// Continuous batching: up to `maxSequences` sequences share each forward pass over the weights,
/// joining and leaving the running batch between decode steps, their keys and values in one
/// ``PagedKVCache``.
///
/// Each step reads one token of every decoding sequence and a chunk of the prompts still being
/// prefilled (at most `prefillChunkTokens` rows while others decode, so a long prompt that joins
/// delays their next token by one chunk, not by its whole prefill). Each sequence then chooses
/// its token with its own ``Decoding``, as ``Generator`` does alone: the same sampling, seed,
/// stop strings, grammar and log-probabilities. A prompt whose leading blocks are already cached
/// (a shared system prompt, a conversation's earlier turns, n choices of one prompt) shares them.
///
/// A sequence is admitted only when the pool's blocks not promised to running sequences hold
/// its prompt and its whole token budget, so the pool never runs out mid-answer; the others wait
/// in order. Queued and running sequences together are bounded by `capacity`, past which
/// ``submit(_:)`` refuses as ``SerialScheduler`` does. A cancelled sequence (its stream dropped)
/// leaves the batch, and frees its blocks, at the next step. All model work runs on one thread of
/// its own, never on the cooperative pool.
///
/// With prompt-lookup speculation, each decoding sequence reads its next token and a draft from
/// its own prompt and answer in the same pass as the others' rows, and chooses from the logits
/// after each draft token in turn, as ``Generator`` does alone; the draft's rejected rest leaves
/// the cache (``PagedKVCache/truncate(_:to:)``). Every row has its own bits, so the tokens and
/// log-probabilities are plain decoding's, with fewer passes where the answer repeats the prompt.
package final class BatchScheduler: CompletionScheduler {
    package let generator: Generator
    package let modelName: String
    /// The most sequences queued or running at once.
    package let capacity: Int
    /// The most sequences in one forward pass.
    package let maxSequences: Int
    /// The most prompt rows prefilled in one step while other sequences decode.
    package let prefillChunkTokens: Int
    /// Token rows per key/value block: a cached prefix is shared a whole block at a time.
    package let blockRows: Int
    /// Prompt-lookup speculation for every request that does not set its own; nil: none.
    package let speculation: SpeculationOptions?

    /// What the running sequences hold, for `/metrics` and tests.
    package struct Usage: Sendable, Equatable {
        /// Sequences in the batch.
        package var running: Int
        /// Sequences waiting to join it.
        package var queued: Int
        /// Key/value blocks held by running sequences.
        package var blocksInUse: Int
        /// Blocks in the pool.
        package var blocks: Int
        /// Prompt tokens that were found in the cache instead of being prefilled, since the start.
        package var reusedPromptTokens: Int
    }

    private typealias Entry = CompletionEntry

    /// A sequence in the batch (the scheduler thread's alone).
    private struct Running {
        let id: Int
        let entry: Entry
        var decoding: Decoding
        /// Prompt tokens not read yet; after them, `next`.
        var pending: ArraySlice<Int32>
        /// The token to read next once the prompt is read.
        var next: Int32?
        /// Blocks promised to it: its prompt and whole budget.
        let blocks: Int
        let cached: Int
        let startNs: UInt64
        var prefilledNs: UInt64?
        var firstChosenNs: UInt64?
        /// Prompt lookup, when it speculates: its drafter, the draft's current length and the
        /// counts so far.
        var lookup: PromptLookup?
        var draftLength = 0
        var counts = SpeculationCounts()
        /// The draft read after `next` in the current pass.
        var draft: [Int32] = []
    }

    private struct State {
        var queue: [Entry] = []
        var running = 0
        var stopping = false
        var usage = Usage(running: 0, queued: 0, blocksInUse: 0, blocks: 0, reusedPromptTokens: 0)
    }

    private let state: Mutex<State>
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - capacity: the most sequences queued or running at once (at least 1).
    ///   - maxSequences: the most sequences decoded together (at least 1).
    ///   - kvTokens: the pool's size in tokens; nil: `maxSequences` × 1024, and at least the
    ///     model's context so any one request fits.
    ///   - prefillChunkTokens: prompt rows per step while others decode.
    ///   - blockRows: token rows per key/value block (docs/ARCHITECTURE.md says why 16).
    ///   - speculation: prompt-lookup decoding for each request that does not ask for its own.
    ///   - precision: how the pool stores keys and values: f32 (the default) gives every sequence
    ///     the serial scheduler's logits bit for bit; f16 halves the pool and can flip a greedy
    ///     choice on a close call (docs/decisions/2026-11-29-batched-serving-by-default.md).
    package init(
        generator: Generator, modelName: String, capacity: Int, maxSequences: Int, kvTokens: Int? = nil,
        prefillChunkTokens: Int = 128, blockRows: Int = 16, precision: PagedKVPrecision = .f32,
        speculation: SpeculationOptions? = nil
    ) {
        precondition(capacity >= 1 && maxSequences >= 1, "a scheduler holds at least one sequence")
        precondition(prefillChunkTokens >= 1, "a prefill chunk of \(prefillChunkTokens) tokens")
        precondition(blockRows >= 1, "key/value blocks of \(blockRows) rows")
        self.generator = generator
        self.modelName = modelName
        self.capacity = capacity
        self.maxSequences = maxSequences
        self.prefillChunkTokens = prefillChunkTokens
        self.blockRows = blockRows
        self.speculation = speculation
        let configuration = generator.model.configuration
        let tokens = kvTokens ?? max(maxSequences * 1024, configuration.contextLength)
        let blockCount = (tokens + blockRows - 1) / blockRows
        var initial = State()
        initial.usage.blocks = blockCount
        state = Mutex(initial)
        let thread = Thread { [self] in
            // The pool is the scheduler thread's alone: made, used and freed there.
            work(
                cache: PagedKVCache(
                    layers: configuration.layers, rowWidth: configuration.keyValueWidth, blockCount: blockCount,
                    blockRows: blockRows, precision: precision))
        }
        thread.name = "loupe-batch"
        thread.start()
    }

    /// Sequences queued or running now.
    package var waiting: Int { state.withLock { $0.queue.count + $0.running } }

    /// The batch and the pool as of the last step.
    package var usage: Usage {
        state.withLock { state in
            var usage = state.usage
            usage.queued = state.queue.count
            return usage
        }
    }

    /// The pool's blocks in use and in all, as `/metrics` shows them.
    package var keyValueBlocks: (inUse: Int, total: Int)? {
        let usage = usage
        return (usage.blocksInUse, usage.blocks)
    }

    package func submit(_ job: CompletionJob) throws(SchedulerRefusal) -> CompletionTicket {
        let (entry, stream) = Entry.make(job)
        let refusal = state.withLock { state -> SchedulerRefusal? in
            if state.stopping { return .stopping }
            let waiting = state.queue.count + state.running
            if waiting >= capacity { return .full(waiting: waiting, capacity: capacity) }
            state.queue.append(entry)
            return nil
        }
        if let refusal { throw refusal }
        wake.signal()
        return CompletionTicket(
            events: stream,
            cancel: { [wake] in
                entry.cancelled.store(true, ordering: .relaxed)
                wake.signal()
            })
    }

    package func shutdown() {
        let dropped = state.withLock { state -> [Entry] in
            state.stopping = true
            defer { state.queue = [] }
            return state.queue
        }
        for entry in dropped { entry.continuation.finish(throwing: SchedulerRefusal.stopping) }
        wake.signal()
    }

    // MARK: The scheduler thread

    private func work(cache: PagedKVCache) {
        var running: [Running] = []
        var nextID = 0
        var promised = 0
        while true {
            running = running.filter { sequence in
                guard sequence.entry.cancelled.load(ordering: .relaxed) else { return true }
                leave(sequence, cache: cache, promised: &promised)
                var sequence = sequence
                if sequence.decoding.tokens.isEmpty {
                    sequence.entry.continuation.finish()
                } else {
                    sequence.decoding.cancel()
                    finish(&sequence)
                }
                return false
            }
            admit(into: &running, cache: cache, nextID: &nextID, promised: &promised)
            publish(running, cache: cache)
            if running.isEmpty {
                if state.withLock({ $0.stopping && $0.queue.isEmpty }) { return }
                wake.wait()
                continue
            }
            step(&running, cache: cache, promised: &promised)
        }
    }

    /// Moves queued sequences into the batch, in order, while there is a slot and the blocks for
    /// the first one's prompt and budget; a sequence that cannot run at all ends with its error.
    private func admit(into running: inout [Running], cache: PagedKVCache, nextID: inout Int, promised: inout Int) {
        let rows = cache.blockRows
        while running.count < maxSequences {
            let head = state.withLock { $0.queue.first }
            guard let entry = head else { return }
            let job = entry.job
            let limits: (context: Int, budget: Int)
            do {
                limits = try generator.limits(prompt: job.prompt, options: job.options)
            } catch {
                dequeue(entry)
                entry.continuation.finish(throwing: error)
                continue
            }
            let blocks = (job.prompt.count + limits.budget + rows - 1) / rows
            if blocks > cache.allocator.blockCount {
                dequeue(entry)
                entry.continuation.finish(
                    throwing: ModelError(
                        file: generator.model.fileName,
                        message: "a prompt of \(job.prompt.count) tokens and \(limits.budget) to generate do not fit "
                            + "the key/value pool of \(cache.allocator.blockCount * rows) tokens"))
                continue
            }
            guard promised + blocks <= cache.allocator.blockCount else { return }
            dequeue(entry)
            if entry.cancelled.load(ordering: .relaxed) {
                entry.continuation.finish()
                continue
            }
            let id = nextID
            nextID += 1
            let cached: Int
            do { cached = try cache.join(id, prompt: job.prompt) } catch {
                preconditionFailure("fresh sequence id \(id) refused: \(error)")
            }
            promised += blocks
            var sequence = Running(
                id: id, entry: entry,
                decoding: Decoding(
                    prompt: job.prompt, options: job.options, budget: limits.budget,
                    tokenizer: generator.tokenizer, fileName: generator.model.fileName),
                pending: job.prompt[cached...], next: nil, blocks: blocks, cached: cached,
                startNs: DispatchTime.now().uptimeNanoseconds)
            if let options = job.options.speculation ?? speculation {
                sequence.lookup = PromptLookup(options)
                sequence.draftLength = options.draftTokens
            }
            running.append(sequence)
            state.withLock { state in
                state.running += 1
                state.usage.reusedPromptTokens += cached
            }
        }
    }

    /// One forward pass: a token of each decoding sequence and a chunk of each prefill, then
    /// every sequence whose logits came chooses its next token or ends.
    private func step(_ running: inout [Running], cache: PagedKVCache, promised: inout Int) {
        let decoding = running.contains { $0.pending.isEmpty }
        var chunk = decoding ? prefillChunkTokens : max(prefillChunkTokens, 512)
        var members: [Int] = []
        var tokens: [[Int32]] = []
        var everyRow = Set<Int>()
        for (index, sequence) in running.enumerated() {
            if let next = sequence.next, sequence.pending.isEmpty {
                // Every accepted draft token is a token generated and the last row chooses one
                // more: a draft longer than the budget leaves would be read for nothing.
                let room = sequence.decoding.remaining - 1
                let draft =
                    sequence.lookup?.draft(
                        after: sequence.decoding.sequence, limit: min(room, sequence.draftLength)) ?? []
                running[index].draft = draft
                if !draft.isEmpty { everyRow.insert(members.count) }
                members.append(index)
                tokens.append([next] + draft)
            } else if let take = Self.promptRows(pending: sequence.pending.count, budget: chunk) {
                chunk -= take
                members.append(index)
                tokens.append(Array(sequence.pending.prefix(take)))
                running[index].pending.removeFirst(take)
            }
        }
        let ids = members.map { running[$0].id }
        let passed = Result { () throws(ModelError) in
            try generator.model.forward(tokens, sequences: ids, cache: cache, everyRow: everyRow)
        }
        guard case .success(let logits) = passed else {
            // Admission keeps the pool from running out and prompts are checked before they join:
            // a failure here is the model's, and no sequence of the pass can go on.
            for index in members {
                leave(running[index], cache: cache, promised: &promised)
                if case .failure(let error) = passed { running[index].entry.continuation.finish(throwing: error) }
            }
            let failed = Set(members)
            running = running.enumerated().filter { !failed.contains($0.offset) }.map(\.element)
            return
        }
        let now = DispatchTime.now().uptimeNanoseconds
        var ended = Set<Int>()
        for (row, index) in members.enumerated() where running[index].pending.isEmpty {
            var sequence = running[index]
            if sequence.prefilledNs == nil { sequence.prefilledNs = now }
            let entry = sequence.entry
            let onText: (String, GeneratedToken?) -> Void = { text, token in
                entry.continuation.yield(.text(text, token))
            }
            do {
                if sequence.lookup != nil, sequence.next != nil {
                    // A decode step with prompt lookup: its draft's rows are chosen from in turn.
                    let draft = sequence.draft
                    sequence.draft = []
                    let (next, accepted) = try sequence.decoding.choose(after: draft, from: logits[row], onText: onText)
                    settle(&sequence, draft: draft, accepted: accepted, cache: cache)
                    sequence.next = next
                } else {
                    sequence.next = try sequence.decoding.choose(logits[row], onText: onText)
                }
            } catch {
                leave(sequence, cache: cache, promised: &promised)
                entry.continuation.finish(throwing: error)
                ended.insert(index)
                continue
            }
            if sequence.firstChosenNs == nil { sequence.firstChosenNs = DispatchTime.now().uptimeNanoseconds }
            if sequence.decoding.isFinished {
                leave(sequence, cache: cache, promised: &promised)
                finish(&sequence)
                ended.insert(index)
            }
            running[index] = sequence
        }
        if !ended.isEmpty {
            running = running.enumerated().filter { !ended.contains($0.offset) }.map(\.element)
        }
    }

    /// After a pass that read `draft` behind a sequence's next token and accepted `accepted` of
    /// its tokens: counts them, makes the cache forget the rejected rest, and adapts the next
    /// draft's length as ``Generator``'s speculation does (two more after a draft accepted
    /// whole, one fewer after a miss).
    private func settle(_ sequence: inout Running, draft: [Int32], accepted: Int, cache: PagedKVCache) {
        guard let lookup = sequence.lookup else { return }
        sequence.counts.passes += 1
        sequence.counts.drafted += draft.count
        sequence.counts.accepted += accepted
        guard !draft.isEmpty else { return }
        sequence.counts.draftedPasses += 1
        if accepted < draft.count {
            let stored = cache.sequences[sequence.id]?.count ?? 0
            do { try cache.truncate(sequence.id, to: stored - (draft.count - accepted)) } catch {
                preconditionFailure("running sequence lost: \(error)")
            }
        }
        let most = lookup.options.draftTokens
        sequence.draftLength =
            accepted == draft.count ? min(most, sequence.draftLength + 2) : max(1, sequence.draftLength - 1)
    }

    /// How many of `pending` prompt rows to read in a step with `budget` rows left: as many as
    /// fit (nil: none this step). A chunk may end anywhere: every row attends as a decode step
    /// does, so a prompt read in pieces has the bits of the prompt read whole
    /// (docs/decisions/2026-11-29-one-row-one-answer.md).
    static func promptRows(pending: Int, budget: Int) -> Int? {
        let take = min(pending, budget)
        return take > 0 ? take : nil
    }

    /// Releases a sequence's blocks and its promise; the blocks held are published before its
    /// stream ends, so a client that has its answer sees them gone from `/metrics`.
    private func leave(_ sequence: Running, cache: PagedKVCache, promised: inout Int) {
        do { try cache.leave(sequence.id) } catch { preconditionFailure("running sequence lost: \(error)") }
        promised -= sequence.blocks
        let held = cache.allocator.blockCount - cache.allocator.freeCount
        state.withLock { state in
            state.running -= 1
            state.usage.blocksInUse = held
        }
    }

    /// Reports the end of a sequence that has ended (or was cancelled) and closes its stream.
    private func finish(_ sequence: inout Running) {
        let entry = sequence.entry
        sequence.decoding.finish(onText: { text, token in entry.continuation.yield(.text(text, token)) })
        let end = DispatchTime.now().uptimeNanoseconds
        let prefilled = sequence.prefilledNs ?? end
        var generation = sequence.decoding.generation(
            prompt: entry.job.prompt, cachedPromptTokens: sequence.cached, startNs: sequence.startNs,
            prefilledNs: prefilled, firstChosenNs: sequence.firstChosenNs ?? prefilled, endNs: end)
        if sequence.lookup != nil { generation.speculation = sequence.counts }
        entry.continuation.yield(.finished(generation))
        entry.continuation.finish()
    }

    private func dequeue(_ entry: Entry) {
        state.withLock { state in
            if let index = state.queue.firstIndex(where: { $0 === entry }) { state.queue.remove(at: index) }
        }
    }

    private func publish(_ running: [Running], cache: PagedKVCache) {
        let held = cache.allocator.blockCount - cache.allocator.freeCount
        state.withLock { state in
            state.usage.running = running.count
            state.usage.blocksInUse = held
        }
    }
}
