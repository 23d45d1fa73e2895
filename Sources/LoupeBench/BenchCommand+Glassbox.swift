import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels

extension BenchCommand {
    /// `loupe bench glassbox`: the logit lens at one position of a long context.
    struct Glassbox: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "glassbox",
            abstract: "SmolLM2's logit lens for one position of a long context (float path), against a plain prefill.",
            discussion: """
                The context is --context tokens of Cranfield abstracts (sample-data/cranfield/corpus.jsonl) \
                read by SmolLM2-135M-Instruct on the float path. Timed, each the median of --repeats runs \
                after a warm-up: a plain prefill of the context (the forward pass, last position's logits \
                only), the probe's prefill keeping every position's residual stream (what a token view \
                does once when it opens), the logit lens of one position from that capture (what the \
                cursor on a token costs: the issue's target is 300 ms), and the lens from nothing (a probe \
                that keeps one position, then its lens). The 1-minute load average is read before and after.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "The corpus the context comes from.") var corpus = "sample-data/cranfield/corpus.jsonl"
        @Option(help: "Tokens of context.") var context = 2000
        @Option(help: "Threads for the model.") var threads = 2
        @Option(help: "Timed runs of each (the median is reported).") var repeats = 3
        @Option(help: "Top tokens per lens cell.") var top = 5

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
        }

        func validate() throws {
            if !(16...8192).contains(context) { throw ValidationError("--context \(context): use 16 to 8192") }
            if repeats < 1 { throw ValidationError("--repeats: at least 1") }
            if threads < 1 { throw ValidationError("--threads: at least 1") }
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
            let result = Result(
                model: ModelLibrary.smolLM2Name, threads: threads, contextTokens: ids.count, repeats: repeats,
                loadSeconds: loadSeconds, plainPrefillSeconds: plain, captureAllPrefillSeconds: capture,
                lensSeconds: lens, lensFromNothingSeconds: cold, captureOverhead: capture / plain,
                capturedMegabytes: megabytes, loadAverageBefore: loadBefore, loadAverageAfter: Self.loadAverage())
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
