import Foundation
import LoupeKit
import LoupeModels
import LoupeServing
import LoupeTensor
import Testing

/// Continuous batching on the real SmolLM2-135M-Instruct (q8, as `loupe serve` runs it):
/// sequences decoded together answer as each does alone, a shared prompt prefix is read once,
/// a cancelled sequence gives its blocks back, and the queue bound refuses as the serial
/// scheduler's does. Needs the model (`scripts/fetch-smollm2`).
@Suite(.serialized) struct BatchSchedulerTests {
    static let questions = [
        "Name three colors.", "What is the capital of France?", "Write a haiku about the sea.",
        "Give me two tips for sleeping well.",
    ]

    static func generator() throws -> Generator {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        return try ModelLibrary(root: ModelsCommandTests.modelsRoot).smolLM2(precision: .q8)
    }

    static func options(maxTokens: Int, temperature: Float = 0, seed: UInt64 = 0) -> GenerationOptions {
        var options = GenerationOptions()
        options.maxTokens = maxTokens
        options.sampling.temperature = temperature
        options.sampling.seed = seed
        options.sampling.topLogprobs = 2
        return options
    }

    /// The streamed text and the generation a ticket ends with.
    static func answer(_ ticket: CompletionTicket) async throws -> (streamed: String, generation: Generation) {
        var streamed = ""
        var generation: Generation?
        for try await event in ticket.events {
            switch event {
            case .text(let text, _): streamed += text
            case .finished(let ended): generation = ended
            }
        }
        return (streamed, try #require(generation, "the stream ended without its generation"))
    }

    /// Polls (the scheduler works on its own thread) until `condition` holds, for at most 60 s.
    static func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<6000 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test func fourConcurrentGreedyAnswersAreEachOnesAlone() async throws {
        let generator = try Self.generator()
        let scheduler = BatchScheduler(generator: generator, modelName: "m", capacity: 8, maxSequences: 4)
        defer { scheduler.shutdown() }
        let prompts = try Self.questions.map { try generator.prompt([.user($0)]) }
        var alone: [Generation] = []
        for prompt in prompts {
            alone.append(
                try await Self.answer(try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 24))))
                    .generation)
        }
        let tickets = try prompts.map { try scheduler.submit(.init(prompt: $0, options: Self.options(maxTokens: 24))) }
        var together: [(streamed: String, generation: Generation)] = []
        for ticket in tickets { together.append(try await Self.answer(ticket)) }
        for index in prompts.indices {
            #expect(together[index].generation.text == alone[index].text, "question \(index)")
            #expect(together[index].generation.tokens.map(\.id) == alone[index].tokens.map(\.id), "question \(index)")
            #expect(together[index].streamed == together[index].generation.text, "question \(index)")
            #expect(!alone[index].text.isEmpty)
        }
    }

    /// The batched scheduler's greedy answers are the serial scheduler's, token for token and
    /// log-probability for log-probability, one request at a time and several at once, a shared
    /// system prompt's cached blocks included: the evidence for batching by default.
    @Test func greedyAnswersBatchedAreTheSerialSchedulersBitForBit() async throws {
        let generator = try Self.generator()
        let serial = SerialScheduler(generator: generator, modelName: "m", capacity: 8)
        defer { serial.shutdown() }
        let batch = BatchScheduler(generator: generator, modelName: "m", capacity: 8, maxSequences: 4)
        defer { batch.shutdown() }
        let system = String(repeating: "You are a careful assistant who answers briefly and plainly. ", count: 4)
        let prompts =
            try Self.questions.map { try generator.prompt([.user($0)]) }
            + Self.questions.prefix(2).map { try generator.prompt([.system(system), .user($0)]) }
        var expected: [Generation] = []
        for prompt in prompts {
            let ticket = try serial.submit(.init(prompt: prompt, options: Self.options(maxTokens: 32)))
            expected.append(try await Self.answer(ticket).generation)
        }
        func expectSame(_ answer: Generation, _ index: Int, _ how: String) {
            let want = expected[index]
            #expect(answer.text == want.text, "prompt \(index) \(how)")
            #expect(answer.tokens.map(\.id) == want.tokens.map(\.id), "prompt \(index) \(how)")
            #expect(
                answer.tokens.map(\.choice) == want.tokens.map(\.choice),
                "prompt \(index) \(how): log-probabilities, alternatives and entropy")
        }
        for (index, prompt) in prompts.enumerated() {
            let ticket = try batch.submit(.init(prompt: prompt, options: Self.options(maxTokens: 32)))
            expectSame(try await Self.answer(ticket).generation, index, "alone")
        }
        // All six at once: four decode together while two wait, join as others leave, and read
        // the system prompt's blocks from the cache.
        let tickets = try prompts.map { try batch.submit(.init(prompt: $0, options: Self.options(maxTokens: 32))) }
        for (index, ticket) in tickets.enumerated() {
            expectSame(try await Self.answer(ticket).generation, index, "batched")
        }
        #expect(batch.usage.reusedPromptTokens > 0, "the shared system prompt was read from the cache")
    }

    /// Sampling, stop strings and limits are per sequence: a seeded draw in a full batch repeats
    /// the same draw alone, and each sequence ends for its own reason.
    @Test func seedsStopsAndLimitsArePerSequence() async throws {
        let generator = try Self.generator()
        let scheduler = BatchScheduler(generator: generator, modelName: "m", capacity: 8, maxSequences: 4)
        defer { scheduler.shutdown() }
        let prompt = try generator.prompt([.user(Self.questions[2])])
        var sampled = Self.options(maxTokens: 24, temperature: 1, seed: 7)
        sampled.sampling.topP = 0.95
        var otherSeed = sampled
        otherSeed.sampling.seed = 8
        let greedy = try await Self.answer(
            try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 40))))
        let word = try #require(greedy.generation.text.split(separator: " ").dropFirst(2).first.map(String.init))
        var stopped = Self.options(maxTokens: 40)
        stopped.stops = [word]
        let alone = try await Self.answer(try scheduler.submit(.init(prompt: prompt, options: sampled))).generation
        let tickets = try [sampled, stopped, Self.options(maxTokens: 5), otherSeed].map {
            try scheduler.submit(.init(prompt: prompt, options: $0))
        }
        var answers: [Generation] = []
        for ticket in tickets { answers.append(try await Self.answer(ticket).generation) }
        #expect(answers[0].tokens.map(\.id) == alone.tokens.map(\.id))
        #expect(answers[3].text != answers[0].text, "another seed draws another answer")
        let before = try #require(greedy.generation.text.range(of: word)).lowerBound
        #expect(answers[1].text == String(greedy.generation.text[..<before]))
        #expect(answers[1].stopReason == .word && answers[1].stoppingWord == word)
        #expect(answers[2].tokens.count == 5 && answers[2].stopReason == .limit)
        #expect(answers[2].tokens.first?.choice.alternatives.count == 2)
        #expect(answers[2].tokens.map(\.id) == Array(greedy.generation.tokens.prefix(5).map(\.id)))
    }

    @Test func aSharedPromptPrefixIsReadOnce() async throws {
        let generator = try Self.generator()
        let scheduler = BatchScheduler(generator: generator, modelName: "m", capacity: 8, maxSequences: 4)
        defer { scheduler.shutdown() }
        let system = String(repeating: "You are a careful assistant who answers briefly and plainly. ", count: 4)
        let first = try generator.prompt([.system(system), .user(Self.questions[0])])
        let second = try generator.prompt([.system(system), .user(Self.questions[1])])
        let shared = zip(first, second).prefix { $0 == $1 }.count
        try #require(shared >= 32, "the prompts share \(shared) tokens")
        let one = try await Self.answer(try scheduler.submit(.init(prompt: first, options: Self.options(maxTokens: 4))))
        #expect(one.generation.timings.cachedPromptTokens == 0)
        let two = try await Self.answer(
            try scheduler.submit(.init(prompt: second, options: Self.options(maxTokens: 4))))
        // Whole blocks of the shared prefix are reused, 16 tokens at a time.
        #expect(two.generation.timings.cachedPromptTokens == shared / 16 * 16)
        #expect(scheduler.usage.reusedPromptTokens == shared / 16 * 16)
    }

    /// A prompt that joins while another decodes is read 5 rows a step (chunks that end at no
    /// multiple of 32), after a shared prefix shorter than 32 tokens read from the cache (7
    /// tokens in one-row blocks, 16 of 19 in 16-row ones), and still answers as the serial
    /// scheduler's single prefill does: the same tokens and log-probabilities, bit for bit.
    @Test(arguments: [(blockRows: 1, shared: 7), (blockRows: 16, shared: 19)])
    func aShortSharedPrefixAndChunksEndingAnywhereKeepTheSerialBits(blockRows: Int, shared: Int) async throws {
        let generator = try Self.generator()
        let serial = SerialScheduler(generator: generator, modelName: "m", capacity: 4)
        defer { serial.shutdown() }
        let batch = BatchScheduler(
            generator: generator, modelName: "m", capacity: 4, maxSequences: 4, prefillChunkTokens: 5,
            blockRows: blockRows)
        defer { batch.shutdown() }
        let first = try generator.prompt([.user(Self.questions[0])])
        let other = try generator.prompt([.user(Self.questions[3])])
        let common = zip(first, other).prefix { $0 == $1 }.count
        let second = Array(first.prefix(shared)) + Array(other[common...])
        try #require(common > shared && second[shared] != first[shared], "the prompts share exactly \(shared) tokens")
        let expected = try await Self.answer(
            try serial.submit(.init(prompt: second, options: Self.options(maxTokens: 16)))
        ).generation
        let running = try batch.submit(.init(prompt: first, options: Self.options(maxTokens: 48)))
        var events = running.events.makeAsyncIterator()
        _ = try await events.next()  // the first prompt is read and cached; it decodes now
        let joined = try await Self.answer(
            try batch.submit(.init(prompt: second, options: Self.options(maxTokens: 16)))
        ).generation
        running.cancel()
        #expect(joined.timings.cachedPromptTokens == shared / blockRows * blockRows)
        #expect(joined.tokens.map(\.id) == expected.tokens.map(\.id))
        #expect(
            joined.tokens.map(\.choice) == expected.tokens.map(\.choice),
            "log-probabilities, alternatives and entropy")
        #expect(!expected.tokens.isEmpty)
    }

    /// A steered model (a direction added to the residual stream after layer 15, as
    /// `--steer FEATURE:α` adds a feature's) steers the batched path too: its answer is the
    /// serial scheduler's steered answer bit for bit, and not the plain model's.
    @Test func aSteeredModelAnswersBatchedAsItDoesSerially() async throws {
        let plain = try Self.generator()
        let width = plain.model.configuration.width
        let direction = (0..<width).map { 6 * sin(Float($0) * 0.37) }
        let steered = Generator(
            model: try plain.model.hooked(
                LlamaResidualHook(layer: 15) { stream, positions in
                    for row in positions.indices {
                        for i in 0..<width { stream.storage[row * width + i] += direction[i] }
                    }
                }), tokenizer: plain.tokenizer, template: plain.template)
        let serial = SerialScheduler(generator: steered, modelName: "m", capacity: 4)
        defer { serial.shutdown() }
        let batch = BatchScheduler(generator: steered, modelName: "m", capacity: 4, maxSequences: 4)
        defer { batch.shutdown() }
        let prompts = try Self.questions.prefix(2).map { try plain.prompt([.user($0)]) }
        for prompt in prompts {
            let want = try await Self.answer(
                try serial.submit(.init(prompt: prompt, options: Self.options(maxTokens: 16))))
            let unsteered = try plain.generate(prompt: prompt, options: Self.options(maxTokens: 16))
            #expect(want.generation.text != unsteered.text, "the direction steers the answer")
            let tickets = try prompts.map { try batch.submit(.init(prompt: $0, options: Self.options(maxTokens: 16))) }
            var answers: [Generation] = []
            for ticket in tickets { answers.append(try await Self.answer(ticket).generation) }
            let got = answers[prompts.firstIndex(of: prompt)!]
            #expect(got.tokens.map(\.id) == want.generation.tokens.map(\.id))
            #expect(got.tokens.map(\.choice) == want.generation.tokens.map(\.choice))
        }
    }

    /// Prompt-lookup speculation inside the batch: each sequence verifies its own draft in the
    /// pass it shares with the others, and its greedy tokens and log-probabilities are plain
    /// (serial, unspeculated) decoding's bit for bit, greedy or seeded, while an answer that
    /// repeats its prompt has drafts accepted (fewer passes than tokens).
    @Test func speculationInTheBatchGivesPlainDecodingsBits() async throws {
        let generator = try Self.generator()
        let serial = SerialScheduler(generator: generator, modelName: "m", capacity: 8)
        defer { serial.shutdown() }
        let batch = BatchScheduler(
            generator: generator, modelName: "m", capacity: 8, maxSequences: 4, speculation: SpeculationOptions())
        defer { batch.shutdown() }
        let edit =
            "Rewrite this sentence with 'cat' in place of 'dog': The quick brown fox jumps over the lazy dog "
            + "near the old river bank every morning."
        let prompts = try ([edit, edit] + Self.questions.prefix(2)).map { try generator.prompt([.user($0)]) }
        // The second edit is sampled: a seeded draw is the same with drafts or without.
        let options = prompts.indices.map {
            $0 == 1 ? Self.options(maxTokens: 40, temperature: 0.8, seed: 11) : Self.options(maxTokens: 40)
        }
        var plain: [Generation] = []
        for (prompt, options) in zip(prompts, options) {
            let ticket = try serial.submit(.init(prompt: prompt, options: options))
            plain.append(try await Self.answer(ticket).generation)
        }
        let tickets = try zip(prompts, options).map { try batch.submit(.init(prompt: $0, options: $1)) }
        for (index, ticket) in tickets.enumerated() {
            let (streamed, got) = try await Self.answer(ticket)
            #expect(got.tokens.map(\.id) == plain[index].tokens.map(\.id), "prompt \(index)")
            #expect(got.tokens.map(\.choice) == plain[index].tokens.map(\.choice), "prompt \(index)")
            #expect(streamed == got.text && got.text == plain[index].text, "prompt \(index)")
            let counts = try #require(got.speculation, "prompt \(index) reports its speculation")
            if index == 0 {
                #expect(counts.accepted > 0, "the edit repeats its prompt: \(counts)")
                #expect(counts.passes + 1 < got.tokens.count, "fewer passes than tokens: \(counts)")
            }
        }
        try await Self.eventually { batch.usage.blocksInUse == 0 }
        #expect(batch.usage.blocksInUse == 0, "rejected drafts leave no block behind")
    }

    @Test func aCancelledSequenceGivesItsBlocksBackAndTheQueueIsBounded() async throws {
        let generator = try Self.generator()
        let scheduler = BatchScheduler(generator: generator, modelName: "m", capacity: 2, maxSequences: 2)
        defer { scheduler.shutdown() }
        let prompt = try generator.prompt([.user(Self.questions[2])])
        let long = try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 2000)))
        let other = try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 3)))
        #expect(throws: SchedulerRefusal.full(waiting: 2, capacity: 2)) {
            try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 3)))
        }
        #expect(try await Self.answer(other).generation.tokens.count == 3)
        var tokens = 0
        for try await event in long.events {
            if case .text(_, _?) = event { tokens += 1 }
            if tokens == 3 { break }
        }
        long.cancel()
        try await Self.eventually { scheduler.waiting == 0 }
        #expect(scheduler.waiting == 0)
        try await Self.eventually { scheduler.usage.blocksInUse == 0 }
        #expect(scheduler.usage.blocksInUse == 0, "the cancelled sequence's blocks are free")
        // Its slot is free again: two more are taken.
        let again = try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 2)))
        #expect(try await Self.answer(again).generation.tokens.count == 2)
    }

    @Test func aRequestLargerThanThePoolFailsAloneNamingIt() async throws {
        let generator = try Self.generator()
        let scheduler = BatchScheduler(generator: generator, modelName: "m", capacity: 4, maxSequences: 2, kvTokens: 64)
        defer { scheduler.shutdown() }
        let prompt = try generator.prompt([.user(Self.questions[0])])
        let big = try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 100)))
        let small = try scheduler.submit(.init(prompt: prompt, options: Self.options(maxTokens: 4)))
        await #expect {
            _ = try await Self.answer(big)
        } throws: { error in
            "\(error)".contains("do not fit the key/value pool of 64 tokens")
        }
        #expect(try await Self.answer(small).generation.tokens.count == 4)
    }
}
