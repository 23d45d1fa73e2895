import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels

extension BenchCommand {
    /// `loupe bench speculative`: prompt-lookup decoding against plain decoding on edit tasks.
    struct Speculative: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "speculative",
            abstract: "Prompt-lookup speculative decoding against plain decoding on an edit task (SmolLM2).",
            discussion: """
                Each edit asks SmolLM2-135M-Instruct to rewrite a Cranfield abstract \
                (sample-data/cranfield/corpus.jsonl) with one word replaced, greedy, up to --max-tokens \
                tokens. Each is generated plainly (one token per pass) and with --speculate \
                prompt-lookup, in turns (--repeats times each, after a warm-up of both): the decode \
                tokens/s of each (the tokens after the first over the time after it), their ratio, \
                the acceptance rate, and whether both gave the same tokens. The figures over all edits \
                are the medians of the runs' totals (tokens over seconds, summed across edits). The \
                1-minute load average is read before and after.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "The Cranfield corpus the abstracts come from.")
        var corpus = "sample-data/cranfield/corpus.jsonl"
        @Option(help: "The most tokens per answer.") var maxTokens = Self.defaults.maxTokens
        @Option(help: "The most tokens one draft proposes.") var draftTokens = Self.defaults.draftTokens
        @Option(help: "The shortest n-gram a draft may be matched on (1–3).") var minNgram = Self.defaults.minNgram
        @Option(help: "Threads for the model.") var threads = 2
        @Option(help: "Timed runs of each mode (the median is reported).") var repeats = 3

        /// The options' defaults, which `SpeculativeEditTests` runs the edits with.
        static let defaults = (maxTokens: 256, draftTokens: 10, minNgram: 1)

        /// An abstract and the one change asked of it.
        struct Edit {
            var document: String
            var word: String
            var replacement: String
        }

        /// Four abstracts of the collection's first five (the second is the longest by far) and a
        /// word each that they use, replaced by a near synonym.
        static let edits = [
            Edit(document: "1", word: "wing", replacement: "airfoil"),
            Edit(document: "3", word: "plate", replacement: "sheet"),
            Edit(document: "4", word: "plate", replacement: "sheet"),
            Edit(document: "5", word: "slab", replacement: "panel"),
        ]

        struct Run: Encodable {
            var generatedTokens: Int
            var decodeSeconds: Double
            var decodeTokensPerSecond: Double
        }

        struct Row: Encodable {
            var document: String
            var edit: String
            var promptTokens: Int
            var plain: Run
            var speculative: Run
            var speedup: Double
            var drafted: Int
            var accepted: Int
            var acceptanceRate: Double
            var passes: Int
            var sameTokens: Bool
            var maxLogprobDifference: Double
        }

        struct Result: Encodable {
            var bench = "speculative"
            var model: String
            var precision: String
            var threads: Int
            var maxTokens: Int
            var draftTokens: Int
            var repeats: Int
            var plainDecodeTokensPerSecond: Double
            var speculativeDecodeTokensPerSecond: Double
            var speedup: Double
            var acceptanceRate: Double
            var allSameTokens: Bool
            var loadAverageBefore: Double
            var loadAverageAfter: Double
            var rows: [Row]
        }

        func validate() throws {
            if maxTokens < 2 || maxTokens > 2048 { throw ValidationError("--max-tokens \(maxTokens): use 2 to 2048") }
            if repeats < 1 { throw ValidationError("--repeats: at least 1") }
            if threads < 1 { throw ValidationError("--threads: at least 1") }
            if !(1...3).contains(minNgram) { throw ValidationError("--min-ngram \(minNgram): use 1 to 3") }
            if SpeculationOptions(draftTokens: draftTokens).problem != nil {
                throw ValidationError("--draft-tokens \(draftTokens): use 1 to 64")
            }
        }

        func run(in context: CommandContext) throws {
            let loadBefore = Self.loadAverage()
            let abstracts = try Self.abstracts(at: corpus)
            let loaded = try context.session.models.smolLM2(precision: .q8)
            var model = loaded.model
            model.threads = threads
            let generator = LoupeModels.Generator(
                model: model, tokenizer: loaded.tokenizer, template: loaded.template)
            var plainOptions = GenerationOptions()
            plainOptions.maxTokens = maxTokens
            plainOptions.sampling.topLogprobs = 1
            var speculativeOptions = plainOptions
            var speculation = SpeculationOptions(draftTokens: draftTokens)
            speculation.minimumNgram = minNgram
            speculativeOptions.speculation = speculation

            var rows: [Row] = []
            // Per repeat, the summed decode tokens and seconds of every edit, for each mode.
            var plainTotals = Array(repeating: (tokens: 0, seconds: 0.0), count: repeats)
            var speculativeTotals = plainTotals
            for edit in Self.edits {
                guard let text = abstracts[edit.document] else {
                    throw CommandFailure("\(corpus): no document \(edit.document) (is it the Cranfield corpus?)")
                }
                let prompt = try generator.prompt([.user(Self.instruction(edit, abstract: text))])
                // A warm-up of each mode, then the timed runs in turns.
                _ = try generator.generate(prompt: prompt, options: plainOptions)
                _ = try generator.generate(prompt: prompt, options: speculativeOptions)
                var plainRuns: [Generation] = []
                var speculativeRuns: [Generation] = []
                for repeatIndex in 0..<repeats {
                    let plain = try generator.generate(prompt: prompt, options: plainOptions)
                    let fast = try generator.generate(prompt: prompt, options: speculativeOptions)
                    plainRuns.append(plain)
                    speculativeRuns.append(fast)
                    plainTotals[repeatIndex].tokens += plain.tokens.count - 1
                    plainTotals[repeatIndex].seconds += plain.timings.decodeSeconds
                    speculativeTotals[repeatIndex].tokens += fast.tokens.count - 1
                    speculativeTotals[repeatIndex].seconds += fast.timings.decodeSeconds
                }
                rows.append(Self.row(edit, prompt: prompt, plain: plainRuns, speculative: speculativeRuns))
            }
            let plainRate = Self.median(plainTotals.map { Double($0.tokens) / $0.seconds })
            let speculativeRate = Self.median(speculativeTotals.map { Double($0.tokens) / $0.seconds })
            let drafted = rows.reduce(0) { $0 + $1.drafted }
            let accepted = rows.reduce(0) { $0 + $1.accepted }
            let result = Result(
                model: ModelLibrary.smolLM2Name, precision: model.precision.rawValue, threads: threads,
                maxTokens: maxTokens, draftTokens: draftTokens, repeats: repeats,
                plainDecodeTokensPerSecond: plainRate, speculativeDecodeTokensPerSecond: speculativeRate,
                speedup: speculativeRate / plainRate,
                acceptanceRate: drafted > 0 ? Double(accepted) / Double(drafted) : 0,
                allSameTokens: rows.allSatisfy(\.sameTokens), loadAverageBefore: loadBefore,
                loadAverageAfter: Self.loadAverage(), rows: rows)
            if json { return context.print(try Formatting.json(result)) }
            report(result, in: context)
        }

        private func report(_ result: Result, in context: CommandContext) {
            context.print(
                "\(result.model), \(result.precision), \(result.threads) thread(s), greedy, up to \(result.maxTokens) "
                    + "tokens, drafts of up to \(result.draftTokens); median of \(result.repeats) runs in turns")
            for row in result.rows {
                context.print(
                    String(
                        format:
                            "  abstract %@ (%@, %d prompt tokens, %d generated): plain %6.1f tokens/s, "
                            + "prompt-lookup %6.1f tokens/s = %.2fx; accepted %d of %d drafted (%.0f%%) in %d "
                            + "passes; same tokens: %@",
                        row.document, row.edit, row.promptTokens, row.plain.generatedTokens,
                        row.plain.decodeTokensPerSecond, row.speculative.decodeTokensPerSecond, row.speedup,
                        row.accepted, row.drafted, row.acceptanceRate * 100, row.passes, row.sameTokens ? "yes" : "NO"))
            }
            context.print(
                String(
                    format:
                        "all edits: plain %.1f tokens/s, prompt-lookup %.1f tokens/s = %.2fx; acceptance %.0f%%; "
                        + "same tokens in every edit: %@; load average %.2f before, %.2f after",
                    result.plainDecodeTokensPerSecond, result.speculativeDecodeTokensPerSecond, result.speedup,
                    result.acceptanceRate * 100, result.allSameTokens ? "yes" : "NO", result.loadAverageBefore,
                    result.loadAverageAfter))
        }

        /// One edit's figures: each mode's median run by decode tokens/s, the counts of the first
        /// speculative run (greedy: every run drafts the same).
        private static func row(_ edit: Edit, prompt: [Int32], plain: [Generation], speculative: [Generation]) -> Row {
            func run(_ runs: [Generation]) -> Run {
                let rates = runs.map(\.timings.decodeTokensPerSecond)
                let chosen = runs[rates.indices.sorted { rates[$0] < rates[$1] }[(rates.count - 1) / 2]]
                return Run(
                    generatedTokens: chosen.tokens.count, decodeSeconds: chosen.timings.decodeSeconds,
                    decodeTokensPerSecond: chosen.timings.decodeTokensPerSecond)
            }
            let (p, s) = (run(plain), run(speculative))
            let counts = speculative[0].speculation ?? SpeculationCounts()
            let same = zip(plain, speculative).allSatisfy { $0.tokens.map(\.id) == $1.tokens.map(\.id) }
            let difference = zip(plain[0].tokens, speculative[0].tokens).map {
                Double(abs($0.choice.token.logprob - $1.choice.token.logprob))
            }.max()
            return Row(
                document: edit.document, edit: "\(edit.word) → \(edit.replacement)", promptTokens: prompt.count,
                plain: p, speculative: s, speedup: s.decodeTokensPerSecond / p.decodeTokensPerSecond,
                drafted: counts.drafted, accepted: counts.accepted, acceptanceRate: counts.acceptanceRate,
                passes: counts.passes, sameTokens: same, maxLogprobDifference: difference ?? 0)
        }

        /// What the model is asked for an edit of `abstract` (`SpeculativeEditTests` asks it too).
        static func instruction(_ edit: Edit, abstract: String) -> String {
            "Rewrite this paragraph exactly, but replace the word \"\(edit.word)\" with \"\(edit.replacement)\":\n\n"
                + abstract
        }

        /// The abstracts by document id.
        static func abstracts(at path: String) throws -> [String: String] {
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw CommandFailure(
                    "\(path): cannot read the corpus (\(error.localizedDescription)); run from the repository or give --corpus"
                )
            }
            var abstracts: [String: String] = [:]
            for (index, line) in text.split(separator: "\n").enumerated() {
                guard
                    let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    let id = object["id"] as? String, let body = object["text"] as? String
                else { throw CommandFailure("\(path) line \(index + 1): expected {\"id\", \"text\", …}") }
                abstracts[id] = body
            }
            return abstracts
        }

        private static func median(_ values: [Double]) -> Double {
            values.sorted()[(values.count - 1) / 2]
        }

        private static func loadAverage() -> Double {
            let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
            return text.split(separator: " ").first.flatMap { Double($0) } ?? 0
        }
    }
}
