import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTensor

extension LlamaPrecision: ExpressibleByArgument {}

/// The sampling and stopping options `generate` and `chat` share.
struct SamplingFlags: ParsableArguments {
    @Option(help: "The most tokens to generate.") var maxTokens = 256
    @Option(help: "0 is greedy; above 0 the logits are divided by it and a token is drawn.") var temperature: Float = 0
    @Option(help: "Keep the most likely tokens whose probability adds up to this (1: off).") var topP: Float = 1
    @Option(help: "Keep the K most likely tokens (0: off).") var topK = 0
    @Option(help: "Drop tokens less likely than this times the most likely one (0: off).") var minP: Float = 0
    @Option(help: "Divide a repeated token's positive logit by this, multiply a negative one (1: off).")
    var repetitionPenalty: Float = 1
    @Option(help: "The draw's seed: the same seed, prompt and options give the same answer.") var seed: UInt64 = 0
    @Option(help: ArgumentHelp("End the answer where this text appears (repeatable).", valueName: "text"))
    var stop: [String] = []
    @Option(help: "The context to allocate, in tokens (default: the prompt and --max-tokens, up to 8192).")
    var context: Int?
    @Option(help: "q8: the file's quantized weights, 8-bit activations (fast); f32: every weight dequantized (exact).")
    var precision: LlamaPrecision = .q8

    func options(alternatives: Int) throws -> GenerationOptions {
        var sampling = SamplingOptions()
        sampling.temperature = temperature
        sampling.topP = topP
        sampling.topK = topK
        sampling.minP = minP
        sampling.repetitionPenalty = repetitionPenalty
        sampling.seed = seed
        sampling.topLogprobs = alternatives
        if let problem = sampling.problem { throw ValidationError(problem) }
        guard maxTokens > 0 else { throw ValidationError("--max-tokens \(maxTokens): ask for at least one token") }
        var options = GenerationOptions()
        options.sampling = sampling
        options.maxTokens = maxTokens
        options.stops = stop
        options.context = context
        return options
    }
}

/// What the model said, as `generate --json` and `chat` record it.
struct GenerationRecord: Encodable {
    struct Alternative: Encodable {
        var id: Int32
        var text: String
        var logprob: Float
    }
    struct Token: Encodable {
        var id: Int32
        var text: String
        var logprob: Float
        var entropy: Float
        var topLogprobs: [Alternative]
    }
    struct Timings: Encodable {
        var promptTokens: Int
        var generatedTokens: Int
        var timeToFirstTokenMs: Double
        var prefillTokensPerSecond: Double
        var decodeTokensPerSecond: Double
    }
    var model: String
    var precision: String
    /// `prompt_ids` in the JSON (the snake-case conversion would spell `promptIDs` `prompt_i_ds`).
    var promptIds: [Int32]
    var text: String
    var stopReason: String
    var stoppingWord: String?
    var tokens: [Token]
    var timings: Timings
    /// Drafted and accepted tokens with `--speculate` (absent without it).
    var speculation: SpeculationRecord?

    init(_ generation: Generation, generator: Generator, speculation options: SpeculationOptions? = nil) {
        let tokenizer = generator.tokenizer
        model = ModelLibrary.smolLM2Name
        precision = generator.model.precision.rawValue
        promptIds = generation.promptIDs
        text = generation.text
        stopReason = generation.stopReason.rawValue
        stoppingWord = generation.stoppingWord
        tokens = generation.tokens.map { token in
            Token(
                id: token.id, text: token.piece, logprob: token.choice.token.logprob, entropy: token.choice.entropy,
                topLogprobs: token.choice.alternatives.map {
                    Alternative(id: $0.id, text: tokenizer.piece($0.id), logprob: $0.logprob)
                })
        }
        let t = generation.timings
        timings = Timings(
            promptTokens: t.promptTokens, generatedTokens: t.generatedTokens,
            timeToFirstTokenMs: t.timeToFirstTokenSeconds * 1000, prefillTokensPerSecond: t.prefillTokensPerSecond,
            decodeTokensPerSecond: t.decodeTokensPerSecond)
        if let counts = generation.speculation, let options {
            speculation = SpeculationRecord(counts, options: options)
        }
    }
}

/// Model text made safe for a terminal: newlines kept, every other control character visible.
func terminalSafe(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false).map { UntrustedText.sanitized($0) }.joined(
        separator: "\n")
}

/// `loupe generate PROMPT`: SmolLM2-135M-Instruct answers, streamed token by token.
struct GenerateCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Answer a prompt with the local model (SmolLM2-135M-Instruct), streaming the text.",
        discussion: """
            The prompt goes through the model's chat template (ChatML, with its default system turn) \
            unless --raw. Generation stops at <|im_end|> or <|endoftext|>, a --stop text, \
            --max-tokens or ctrl+c. --json gives every token with its id, text, log-probability and \
            the --top-logprobs most likely alternatives, and the timings (time to first token, \
            prefill and decode tokens/s). --speculate prompt-lookup drafts up to --draft-tokens \
            tokens from the prompt and the answer so far and checks them in one pass: the same tokens \
            and log-probabilities as without it (in q8 within its rounding, which can flip a \
            near-tie), faster where the answer repeats the prompt (an edit, a quote); --json adds the drafted and accepted counts. \
            --steer FEATURE:α adds α times an SAE feature's decoder direction to the residual stream at \
            the SAE's layer (loupe sae train --model smollm2), --ablate FEATURE removes the feature's \
            own contribution wherever it fires; either prints the answer with and without, and how \
            much each answer's log-probability moved (a plain generation runs no hook at all). Fetch \
            the model with `loupe models fetch smollm2`.
            """)
    static var runsInsideTUI: Bool { false }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The prompt.") var prompt: String
    @Option(help: "A system turn in place of the model's default one.") var system: String?
    @Flag(help: "Send the prompt as it is, without the chat template.") var raw = false
    @Option(help: "Keep this many alternatives (0–20) beside each token, with log-probabilities.")
    var topLogprobs = 0
    @OptionGroup var sampling: SamplingFlags
    @OptionGroup var speculation: SpeculationFlags
    @Flag(help: "Print JSON: the tokens, their log-probabilities and alternatives, the timings.") var json = false
    @Flag(help: "Leave out the timings line (llama.cpp's --no-perf).") var noPerf = false
    @Option(
        help: ArgumentHelp(
            "Steer with an SAE feature: add α × its decoder direction at the SAE's layer (repeatable); "
                + "prints the answer with and without.", valueName: "feature:α"))
    var steer: [String] = []
    @Option(help: ArgumentHelp("Remove an SAE feature's contribution at its layer (repeatable).", valueName: "feature"))
    var ablate: [Int] = []
    @Option(help: "The SAE --steer and --ablate use (default: the newest finished SmolLM2 SAE).") var sae: Int64?

    func run(in context: CommandContext) throws {
        var options = try sampling.options(alternatives: topLogprobs)
        if !steer.isEmpty || !ablate.isEmpty { return try runSteered(options: options, in: context) }
        options.speculation = try speculation.options()
        let generator = try context.session.models.smolLM2(precision: sampling.precision)
        var messages: [ChatMessage] = []
        if let system { messages.append(.system(system)) }
        messages.append(.user(prompt))
        let ids = raw ? generator.tokenizer.encode(prompt) : try generator.prompt(messages)
        let generation = try Interrupt.cancellable(
            context, work: "an answer was being generated", advice: "the text so far was printed"
        ) {
            try generator.generate(
                prompt: ids, options: options, isCancelled: { context.reporter.isCancelled },
                onText: { text, _ in if !json { context.output.write(terminalSafe(text)) } })
        }
        if json {
            let record = GenerationRecord(generation, generator: generator, speculation: options.speculation)
            return context.print(try Formatting.json(record))
        }
        let t = generation.timings
        context.print()
        if topLogprobs > 0 { printTokens(generation, tokenizer: generator.tokenizer, context) }
        // The counts before the timings: for a greedy answer they are the same every run.
        if let counts = generation.speculation, let speculation = options.speculation {
            context.print("(" + SpeculationRecord(counts, options: speculation).line + ")")
        }
        if noPerf { return }
        context.print(
            "(\(Formatting.count(t.generatedTokens, "token")), stopped by \(generation.stopReason.rawValue)"
                + (generation.stoppingWord.map { " \(UntrustedText.sanitized($0).debugDescription)" } ?? "")
                + String(
                    format: "; first token %.0f ms, prefill %.0f tokens/s, decode %.0f tokens/s)",
                    t.timeToFirstTokenSeconds * 1000, t.prefillTokensPerSecond, t.decodeTokensPerSecond))
    }
}

extension GenerateCommand {
    /// `--steer`/`--ablate`: the answer with and without the intervention (``SAESteering``).
    fileprivate func runSteered(options: GenerationOptions, in context: CommandContext) throws {
        var request = SAESteering.Request(sae: sae, prompt: prompt)
        request.system = system
        request.raw = raw
        request.options = options
        request.precision = sampling.precision
        request.ablations = ablate
        let result = try SAECommand.plainly {
            request.steers = try steer.map { try SAESteering.Steer(parsing: $0) }
            return try Interrupt.cancellable(context, work: "the answers were being generated") {
                try SAESteering(database: try context.database(access: .read), models: context.session.models).run(
                    request, isCancelled: { context.reporter.isCancelled })
            }
        }
        if json { return context.print(try Formatting.json(result)) }
        SAECommand.printSteering(result, context)
    }

    /// Each generated token with its probability and the most likely alternatives.
    fileprivate func printTokens(_ generation: Generation, tokenizer: BPETokenizer, _ context: CommandContext) {
        func shown(_ id: Int32) -> String { UntrustedText.sanitized(tokenizer.piece(id)).debugDescription }
        context.print("token            p      alternatives")
        for token in generation.tokens {
            let alternatives = token.choice.alternatives.filter { $0.id != token.id }.map {
                shown($0.id) + String(format: " %.3f", exp(Double($0.logprob)))
            }
            context.print(
                shown(token.id).padded(to: 14) + String(format: " %6.3f  ", exp(Double(token.choice.token.logprob)))
                    + alternatives.joined(separator: "  "))
        }
    }
}

/// `loupe logits TEXT`: the model's next-token distribution at every position of a text
/// (teacher-forced), what parity checks and notebooks read.
struct LogitsCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "logits",
        abstract: "The local model's top next tokens at every position of a text (teacher-forced).",
        discussion: """
            The text is tokenized as it is (special tokens such as <|im_start|> included) and read in \
            one pass; position t shows the most likely tokens after the first t + 1 tokens, with their \
            log-probabilities, and the log-probability the model gave the token that actually comes next.
            """)
    static var runsInsideTUI: Bool { false }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The text.") var text: String
    @Option(help: "How many of the most likely next tokens to show at each position (1–20).") var top = 5
    @Option(help: "q8: the file's quantized weights, 8-bit activations; f32: the exact path.")
    var precision: LlamaPrecision = .q8
    @Flag(help: "Print JSON.") var json = false
    @Option(
        help: ArgumentHelp(
            "Also write every position's logits, the whole vocabulary, to this file: float32 little-endian, "
                + "one row of vocabulary-size values per token (what a parity check against another engine reads).",
            valueName: "path"))
    var logitsOut: String?

    struct Position: Encodable {
        var position: Int
        var id: Int32
        var text: String
        /// The log-probability of the token that comes next in the text (nil at the last position).
        var nextLogprob: Float?
        var top: [GenerationRecord.Alternative]
    }

    struct Record: Encodable {
        var model: String
        var precision: String
        var ids: [Int32]
        var positions: [Position]
    }

    func validate() throws {
        if !(1...20).contains(top) { throw ValidationError("--top \(top): use 1 to 20") }
    }

    func run(in context: CommandContext) throws {
        let generator = try context.session.models.smolLM2(precision: precision)
        let tokenizer = generator.tokenizer
        let ids = tokenizer.encode(text, parseSpecial: true)
        guard !ids.isEmpty else { throw CommandFailure("the text has no tokens") }
        let logits = try generator.model.logits(for: ids)
        if let logitsOut {
            // Floats are little-endian on every platform Loupe builds for; the file is the tensor's storage.
            let bytes = logits.storage.withUnsafeBytes { Data($0) }
            do {
                try bytes.write(to: URL(fileURLWithPath: logitsOut), options: .atomic)
            } catch {
                throw CommandFailure("cannot write the logits to \(logitsOut): \(error.localizedDescription)")
            }
        }
        var positions: [Position] = []
        for (t, id) in ids.enumerated() {
            let row = logits.row(t)
            let summary = row.withUnsafeBufferPointer { Sampler.logSoftmaxSummary($0, top: top) }
            let next = t + 1 < ids.count ? row[row.startIndex + Int(ids[t + 1])] - summary.logSumExp : nil
            positions.append(
                Position(
                    position: t, id: id, text: tokenizer.piece(id), nextLogprob: next,
                    top: summary.top.map { .init(id: $0.id, text: tokenizer.piece($0.id), logprob: $0.logprob) }))
        }
        if json {
            return context.print(
                try Formatting.json(
                    Record(
                        model: ModelLibrary.smolLM2Name, precision: precision.rawValue, ids: ids, positions: positions
                    )))
        }
        context.print("\(ids.count) tokens, \(precision.rawValue); after each token, the model's top \(top):")
        for position in positions {
            let piece = UntrustedText.sanitized(position.text).debugDescription
            let next = position.nextLogprob.map { String(format: "next %7.3f", $0) } ?? "           "
            let alternatives = position.top.map {
                "\(UntrustedText.sanitized($0.text).debugDescription) \(String(format: "%.3f", $0.logprob))"
            }.joined(separator: "  ")
            context.print(
                String(format: "%4d %6d ", position.position, position.id) + piece.padded(to: 14) + " "
                    + next + "  " + alternatives)
        }
    }
}

/// `loupe tokenize TEXT`: the local model's tokens for a text, as llama-server's `/tokenize`
/// gives them `with_pieces`.
struct TokenizeCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "tokenize",
        abstract: "The local model's (SmolLM2's) token ids and pieces for a text.",
        discussion: """
            Byte-level BPE from the GGUF's own vocabulary and merges, with its smollm pre-tokenizer \
            (every digit its own piece). Special tokens such as <|im_start|> are read as such only \
            with --special. A piece is shown as Swift writes a string: a space is a space, a newline \\n.
            """)
    static var runsInsideTUI: Bool { false }

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The text.") var text: String
    @Flag(help: "Read special tokens (<|im_start|>, <|im_end|>…) as the tokens they name.") var special = false
    @Flag(help: "Print JSON.") var json = false

    struct Record: Encodable {
        var ids: [Int32]
        var pieces: [String]
    }

    func run(in context: CommandContext) throws {
        // The tokenizer is the same at either precision; f32 would dequantize every weight.
        let tokenizer = try context.session.models.smolLM2(precision: .q8).tokenizer
        let ids = tokenizer.encode(text, parseSpecial: special)
        let pieces = ids.map { tokenizer.piece($0) }
        if json { return context.print(try Formatting.json(Record(ids: ids, pieces: pieces))) }
        context.print("\(Formatting.count(ids.count, "token"))")
        for (id, piece) in zip(ids, pieces) {
            context.print(String(format: "%6d  ", id) + UntrustedText.sanitized(piece).debugDescription)
        }
    }
}
