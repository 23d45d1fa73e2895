import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeStore

extension BenchCommand {
    /// `loupe bench glassbox`: issue 60's three figures. The logit lens at one position of a long
    /// context; the Traces panel opening the token view of a local model's step of ~500 generated
    /// tokens; a steered generation against the same plain one.
    struct Glassbox: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "glassbox",
            abstract:
                "SmolLM2's logit lens on a long context, a step's token view, and a steered generation against a plain one.",
            discussion: """
                The lens: --context tokens of Cranfield abstracts (sample-data/cranfield/corpus.jsonl) \
                read by SmolLM2-135M-Instruct on the float path. Timed, each the median of --repeats runs \
                after a warm-up: a plain prefill of the context (the forward pass, last position's logits \
                only), the probe's prefill keeping every position's residual stream (what a token view \
                does once when it opens), the logit lens of one position from that capture (what the \
                cursor on a token costs: the issue's target is 300 ms), and the lens from nothing (a probe \
                that keeps one position, then its lens).

                The token view: the local provider (q8) answers one chat request of up to --step-tokens \
                tokens, recorded as an agent's model-call step in a scratch workspace; the Traces panel \
                opens that trace in-process and `T` opens the step's token view. Timed, the median of \
                --view-repeats: from `T` to the view's first frame (target 100 ms), and from `enter` on \
                the trace to that frame.

                Steering: --steer-tokens tokens greedily generated (q8, --threads) for one prompt with no \
                hook, and with `--steer 0:--alpha` at --steer-layer through the same SAEIntervention and \
                hooked model `loupe generate --steer` uses; the SAE is freshly initialised (its decoder \
                rows are random unit directions of the residual width, 576), which costs what a trained \
                one of its shape costs. Both answers are cut to the shorter's length so they generate \
                the same tokens count; --rounds alternating runs each (which goes first alternates), \
                the medians compared: target 1.2×. The 1-minute load average is read before and after.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "The corpus the context comes from.") var corpus = "sample-data/cranfield/corpus.jsonl"
        @Option(help: "Tokens of context.") var context = 2000
        @Option(help: "Threads for the model.") var threads = 2
        @Option(help: "Timed runs of each (the median is reported).") var repeats = 3
        @Option(help: "Top tokens per lens cell.") var top = 5
        @Option(help: "The most tokens the token view's step generates.") var stepTokens = 500
        @Option(help: "Timed openings of the token view (the median is reported).") var viewRepeats = 20
        @Option(help: "Tokens each steered and plain generation makes (at most).") var steerTokens = 128
        @Option(help: "Alternating rounds of a plain and a steered generation.") var rounds = 5
        @Option(help: "The steering strength α (feature 0 of the SAE).") var alpha: Float = 8
        @Option(help: "The layer whose residual stream is steered.") var steerLayer = 15

        struct Result: Encodable {
            var bench = "glassbox"
            var model: String
            var precision = "f32"
            var threads: Int
            var contextTokens: Int
            var repeats: Int
            var loadSeconds: Double
            var plainPrefillSeconds: Double
            var captureAllPrefillSeconds: Double
            /// The lens for one position from a capture of every position.
            var lensSeconds: Double
            /// A probe keeping one position, then its lens.
            var lensFromNothingSeconds: Double
            var targetLensSeconds = 0.3
            var captureOverhead: Double
            var capturedMegabytes: Double
            var loadAverageBefore: Double
            var loadAverageAfter: Double
            var tokenView: TokenViewResult
            var steering: SteeringResult
        }

        /// Opening a step's token view in the Traces panel.
        struct TokenViewResult: Encodable {
            /// Tokens the recorded step generated (it may stop before --step-tokens).
            var stepTokens: Int
            var repeats: Int
            /// `T` to the view's first frame.
            var openMilliseconds: Double
            /// `enter` on the trace (opened, the step read) to the same frame.
            var fromTraceMilliseconds: Double
            var targetOpenMilliseconds = 100.0
            var generateSeconds: Double
        }

        /// One steered generation against the same plain one.
        struct SteeringResult: Encodable {
            var precision = "q8"
            var direction = "an untrained SAE's feature 0: a random unit direction of the residual stream"
            var layer: Int
            var alpha: Float
            var tokens: Int
            var rounds: Int
            var plainSeconds: Double
            var steeredSeconds: Double
            var steeredOverPlain: Double
            var targetRatio = 1.2
            /// Whether the steered answer's tokens differ from the plain one's (the hook did act).
            var answerChanged: Bool
        }

        func validate() throws {
            if !(16...8192).contains(context) { throw ValidationError("--context \(context): use 16 to 8192") }
            if repeats < 1 { throw ValidationError("--repeats: at least 1") }
            if threads < 1 { throw ValidationError("--threads: at least 1") }
            if !(1...2048).contains(stepTokens) { throw ValidationError("--step-tokens \(stepTokens): use 1 to 2048") }
            if viewRepeats < 1 { throw ValidationError("--view-repeats: at least 1") }
            if !(1...2048).contains(steerTokens) {
                throw ValidationError("--steer-tokens \(steerTokens): use 1 to 2048")
            }
            if rounds < 1 { throw ValidationError("--rounds: at least 1") }
            if !alpha.isFinite { throw ValidationError("--alpha: a finite number") }
        }

        func run(in commandContext: CommandContext) throws {
            let loadBefore = Self.loadAverage()
            let start = Date()
            let loaded = try commandContext.session.models.smolLM2(precision: .f32)
            let loadSeconds = Date().timeIntervalSince(start)
            var model = loaded.model
            model.threads = threads
            let ids = try Self.context(tokens: context, corpus: corpus, tokenizer: loaded.tokenizer)
            let position = ids.count - 1
            func timed(_ body: () throws -> Void) rethrows -> Double {
                try body()  // a warm-up
                var seconds: [Double] = []
                for _ in 0..<repeats {
                    let begin = Date()
                    try body()
                    seconds.append(Date().timeIntervalSince(begin))
                }
                return seconds.sorted()[(seconds.count - 1) / 2]
            }
            let plain = try timed {
                var cache = try model.makeCache(context: ids.count)
                _ = try model.forward(ids, cache: &cache)
            }
            var kept: LlamaProbe?
            let capture = try timed { kept = try model.probe(ids, LlamaProbeRequest(positions: Array(ids.indices))) }
            guard let one = kept?.at(position: position) else { throw CommandFailure("the capture kept no position") }
            let megabytes = Double((kept?.residuals.reduce(0) { $0 + $1.count } ?? 0) * 4) / 1e6
            kept = nil
            var cells: [LensCell] = []
            let lens = timed { cells = model.logitLens(of: one, top: top) }
            let cold = try timed { cells = try model.logitLens(ids, positions: [position], top: top) }
            guard cells.count == model.configuration.layers + 1 else {
                throw CommandFailure("the lens gave \(cells.count) rows")
            }
            let tokenView = try measureTokenView(commandContext)
            let steering = try measureSteering(commandContext)
            let result = Result(
                model: ModelLibrary.smolLM2Name, threads: threads, contextTokens: ids.count, repeats: repeats,
                loadSeconds: loadSeconds, plainPrefillSeconds: plain, captureAllPrefillSeconds: capture,
                lensSeconds: lens, lensFromNothingSeconds: cold, captureOverhead: capture / plain,
                capturedMegabytes: megabytes, loadAverageBefore: loadBefore, loadAverageAfter: Self.loadAverage(),
                tokenView: tokenView, steering: steering)
            if json { return commandContext.print(try Formatting.json(result)) }
            commandContext.print(
                "SmolLM2-135M-Instruct f32, \(ids.count) tokens of context, \(threads) threads, median of \(repeats); "
                    + String(
                        format: "model ready in %.2f s; load %.2f → %.2f", loadSeconds, loadBefore,
                        result.loadAverageAfter))
            commandContext.print(String(format: "  plain prefill                  %8.3f s", plain))
            commandContext.print(
                String(
                    format: "  prefill keeping every stream   %8.3f s  (%.2f× plain, %.0f MB kept)", capture,
                    capture / plain, megabytes))
            commandContext.print(String(format: "  lens of one position, captured %8.3f s  (target 0.300 s)", lens))
            commandContext.print(String(format: "  lens of one position, cold     %8.3f s", cold))
            func label(_ text: String) -> String { "  " + text.padding(toLength: 31, withPad: " ", startingAt: 0) }
            commandContext.print(
                label("token view, \(tokenView.stepTokens)-token step")
                    + String(
                        format: "%8.1f ms (T to its first frame, target 100 ms; %.1f ms from enter on the trace; "
                            + "median of %d)",
                        tokenView.openMilliseconds, tokenView.fromTraceMilliseconds, tokenView.repeats))
            commandContext.print(
                label("steered generation, \(steering.tokens) tokens")
                    + String(
                        format: "%8.3f s  (plain %.3f s: %.2f×, target ≤ 1.2×; q8, layer %d, α %g, median of %d "
                            + "alternating)",
                        steering.steeredSeconds, steering.plainSeconds, steering.steeredOverPlain, steering.layer,
                        steering.alpha, steering.rounds)
                    + (steering.answerChanged ? "" : "; the steered answer is the plain one"))
        }

        /// A local model's step of up to --step-tokens tokens, recorded as an agent's model call
        /// in a scratch workspace, and the Traces panel opening its token view.
        private func measureTokenView(_ context: CommandContext) throws -> TokenViewResult {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "loupe-bench-glassbox-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let workspace = try Workspace(path: directory + "/glassbox.sqlite")
            let generator = try threaded(context.session.models.smolLM2(precision: .q8))
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "generating the step"))
            let begin = Date()
            let step = try Self.recordStep(generator: generator, maxTokens: stepTokens, in: workspace)
            let generateSeconds = Date().timeIntervalSince(begin)
            let browser = TracesBrowser(tables: TraceTables(workspace))
            _ = try RenderBench.tokenView(trace: step, browser: browser)  // a warm-up
            var open: [Double] = []
            var fromTrace: [Double] = []
            var shown = 0
            for _ in 0..<viewRepeats {
                let timed = try RenderBench.tokenView(trace: step, browser: browser)
                open.append(timed.open)
                fromTrace.append(timed.fromTrace)
                shown = timed.tokens
            }
            return TokenViewResult(
                stepTokens: shown, repeats: viewRepeats, openMilliseconds: Stats(open).median,
                fromTraceMilliseconds: Stats(fromTrace).median, generateSeconds: generateSeconds)
        }

        /// The prompt the token view's step answers: long enough an answer that SmolLM2 rarely
        /// stops before a few hundred tokens.
        static let stepPrompt =
            "Write a long, detailed essay on the history of aviation, from the first balloons to jet airliners, "
            + "with a section for each era and the people, machines and accidents that shaped it."

        /// One chat request answered by the local provider (tempered, seeded, no tools) and
        /// recorded as the agent runner records a model call: a trace of an agent span and its
        /// model-call span with the provider's attributes, `loupe.llm.tokens` among them. Seeds
        /// are tried until an answer reaches `maxTokens` (at most four; the longest is kept).
        static func recordStep(generator: LoupeModels.Generator, maxTokens: Int, in workspace: Workspace) throws
            -> Int64
        {
            var best: (response: ChatResponse, nanoseconds: (Int64, Int64))?
            for seed in UInt64(1)...4 {
                var sampling = SamplingOptions()
                sampling.temperature = 0.7
                sampling.seed = seed
                let provider = LocalModelProvider(generator: generator, sampling: sampling, toolChoice: .auto)
                let start = Int64(Date().timeIntervalSince1970 * 1e9)
                let response = try provider.complete(
                    ChatRequest(messages: [Message(role: "user", text: stepPrompt)], tools: [], maxTokens: maxTokens),
                    onText: { _ in })
                let end = Int64(Date().timeIntervalSince1970 * 1e9)
                if (response.usage.outputTokens ?? 0) > (best?.response.usage.outputTokens ?? -1) {
                    best = (response, (start, end))
                }
                if (response.usage.outputTokens ?? 0) >= maxTokens { break }
            }
            guard let (response, (start, end)) = best else { throw CommandFailure("the local model gave no answer") }
            var root = TraceSpan(
                spanID: "agent", parentID: nil, kind: .agent, name: stepPrompt, startNs: start, endNs: end)
            root.input = [Message(role: "user", text: stepPrompt)]
            root.output = [response.message]
            root.status = .ok
            var call = TraceSpan(
                spanID: "llm1", parentID: "agent", kind: .llm, name: "chat \(response.model)", startNs: start,
                endNs: end)
            call.model = response.model
            call.input = [Message(role: "user", text: stepPrompt)]
            call.output = [response.message]
            call.usage = response.usage
            call.status = .ok
            call.attributes["gen_ai.provider.name"] = .string("local")
            if let reason = response.finishReason { call.attributes["finish_reason"] = .string(reason) }
            for (key, value) in response.attributes where call.attributes[key] == nil { call.attributes[key] = value }
            let trace = Trace(
                externalID: "bench-glassbox-\(UUID().uuidString)", format: .loupe, name: "glassbox token view",
                spans: [root, call])
            let counts = try TraceTables(workspace).importTraces([TraceService.record(trace, sourceFile: nil)])
            guard let id = counts.ids.first else { throw CommandFailure("the step was not recorded") }
            return id
        }

        /// `loaded` on --threads threads.
        private func threaded(_ loaded: LoupeModels.Generator) -> LoupeModels.Generator {
            var model = loaded.model
            model.threads = threads
            return LoupeModels.Generator(model: model, tokenizer: loaded.tokenizer, template: loaded.template)
        }

        /// The same prompt answered greedily without a hook and steered, alternating, each cut to
        /// the shorter answer's length so that both generate the same number of tokens.
        private func measureSteering(_ context: CommandContext) throws -> SteeringResult {
            let plain = try threaded(context.session.models.smolLM2(precision: .q8))
            let width = plain.model.configuration.width
            guard (0..<plain.model.configuration.layers).contains(steerLayer) else {
                throw CommandFailure(
                    "--steer-layer \(steerLayer): SmolLM2 has layers 0…\(plain.model.configuration.layers - 1)")
            }
            let sae = SparseAutoencoder(
                inputs: width, width: 8 * width, activation: .topK(k: 32, auxK: 256, auxCoefficient: 1.0 / 32))
            let hook = try SAEIntervention(sae: sae, layer: steerLayer).steering([(0, alpha)], ablating: [])
            let steered = LoupeModels.Generator(
                model: try plain.model.hooked(hook), tokenizer: plain.tokenizer, template: plain.template)
            let prompt = try plain.prompt([.user(Self.stepPrompt)])
            var options = GenerationOptions()
            options.maxTokens = steerTokens
            // Greedy answers are the same every time: the first of each says how long both may run.
            let plainFirst = try plain.generate(prompt: prompt, options: options)
            let steeredFirst = try steered.generate(prompt: prompt, options: options)
            let tokens = min(plainFirst.tokens.count, steeredFirst.tokens.count)
            guard tokens > 0 else { throw CommandFailure("a generation stopped before its first token") }
            options.maxTokens = tokens
            func timed(_ generator: LoupeModels.Generator) throws -> Double {
                let begin = Date()
                let made = try generator.generate(prompt: prompt, options: options)
                let seconds = Date().timeIntervalSince(begin)
                guard made.tokens.count == tokens else {
                    throw CommandFailure("a greedy generation made \(made.tokens.count) tokens, not \(tokens)")
                }
                return seconds
            }
            var plainSeconds: [Double] = []
            var steeredSeconds: [Double] = []
            for round in 0..<rounds {
                context.reporter.report(
                    JobProgress(completed: Double(round), total: Double(rounds), detail: "steering round \(round + 1)"))
                if round % 2 == 0 {
                    plainSeconds.append(try timed(plain))
                    steeredSeconds.append(try timed(steered))
                } else {
                    steeredSeconds.append(try timed(steered))
                    plainSeconds.append(try timed(plain))
                }
            }
            let plainMedian = Stats(plainSeconds).median
            let steeredMedian = Stats(steeredSeconds).median
            return SteeringResult(
                layer: steerLayer, alpha: alpha, tokens: tokens, rounds: rounds, plainSeconds: plainMedian,
                steeredSeconds: steeredMedian, steeredOverPlain: steeredMedian / plainMedian,
                answerChanged: plainFirst.tokens.prefix(tokens).map(\.id)
                    != steeredFirst.tokens.prefix(tokens).map(\.id))
        }

        /// The first `tokens` tokens of the corpus's abstracts, one after another.
        static func context(tokens: Int, corpus: String, tokenizer: BPETokenizer) throws -> [Int32] {
            let text: String
            do {
                text = try String(contentsOfFile: corpus, encoding: .utf8)
            } catch {
                throw CommandFailure("\(corpus): cannot read the corpus (\(error.localizedDescription)); give --corpus")
            }
            var ids: [Int32] = []
            for line in text.split(separator: "\n") where ids.count < tokens {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let abstract = object["text"] as? String
                else { throw CommandFailure("\(corpus): a line is not a JSON object with a \"text\"") }
                ids += tokenizer.encode(abstract + "\n\n")
            }
            guard ids.count >= tokens else {
                throw CommandFailure("\(corpus): only \(ids.count) tokens; ask for a shorter --context")
            }
            return Array(ids.prefix(tokens))
        }

        private static func loadAverage() -> Double {
            let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
            return text.split(separator: " ").first.flatMap { Double($0) } ?? 0
        }
    }
}
