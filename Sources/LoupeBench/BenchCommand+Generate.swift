import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeProfiling
import LoupeTensor

extension BenchCommand {
    /// `loupe bench generate`: the local model's prefill and decode speed, llama-bench's way.
    struct Generate: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "generate",
            abstract: "SmolLM2's prefill and decode tokens/s, llama-bench's way, against the memory bound.",
            discussion: """
                As llama-bench runs pp512 and tg128: a prefill of --prompt-tokens random token ids in one \
                pass, then --generate-tokens decode steps of one token each after it (so decode reads a \
                KV cache of the prompt's depth), each forward pass alone (no sampling), for each --threads \
                count. Of --repeats runs, the median run by wall time is reported (the lower middle one \
                for an even count), all its figures from that one run. Also: time to first token (the prefill and one \
                greedy choice), peak RSS, and decode's bytes read per token (every weight once, the KV \
                cache at its depth) against the DRAM bandwidth (a triad over 1 GiB) measured immediately \
                before the reported run, so the bound moves with the machine as the run does: the \
                share of the memory bound decode reaches; the median of every run's triad is shown \
                beside it. scripts/bench/generate.sh runs llama.cpp's llama-bench on the same file in \
                the same run.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Tokens in the prefill.") var promptTokens = 512
        @Option(help: "Decode steps after the prefill.") var generateTokens = 128
        @Option(help: "Thread counts to run, comma-separated.") var threads = "1,2"
        @Option(help: "Timed runs per thread count (the median is reported).") var repeats = 3
        @Option(help: "q8 (the file's quantized weights) or f32 (every weight dequantized).")
        var precision: LlamaPrecision = .q8

        struct Row: Encodable {
            var threads: Int
            var prefillTokensPerSecond: Double
            var decodeTokensPerSecond: Double
            var timeToFirstTokenMs: Double
            var decodeBytesPerToken: Double
            /// The triad measured immediately before the reported run: the bound the share is of.
            var memoryBandwidthGBs: Double
            /// The median of the triads measured before each timed run of this thread count.
            var memoryBandwidthMedianGBs: Double
            var decodeShareOfMemoryBound: Double
        }

        struct Result: Encodable {
            var model: String
            var precision: String
            var promptTokens: Int
            var generateTokens: Int
            var repeats: Int
            var weightBytes: Int
            var loadSeconds: Double
            var peakRSSMegabytes: Double
            /// Which triad `decodeShareOfMemoryBound` is against.
            var bandwidthMeasured = "triad over 1 GiB immediately before the reported run"
            var rows: [Row]
        }

        /// The index of the median of `times`: the lower middle one for an even count, so the
        /// figures reported are one run's, never the mean of two.
        static func medianRun(_ times: [UInt64]) -> Int {
            let order = times.indices.sorted { times[$0] < times[$1] }
            return order[(order.count - 1) / 2]
        }

        func validate() throws {
            if promptTokens < 1 || generateTokens < 1 || promptTokens + generateTokens > 8192 {
                throw ValidationError("--prompt-tokens and --generate-tokens: at least 1 each, 8192 in all")
            }
            if repeats < 1 { throw ValidationError("--repeats: at least 1") }
        }

        func run(in context: CommandContext) throws {
            let counts = threads.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !counts.isEmpty, counts.allSatisfy({ $0 >= 1 }) else {
                throw ValidationError("--threads \(threads): thread counts like 1,2")
            }
            let models = context.session.models
            let loadStart = DispatchTime.now().uptimeNanoseconds
            let generator = try models.smolLM2(precision: precision)
            let loadSeconds = Double(DispatchTime.now().uptimeNanoseconds - loadStart) / 1e9
            let weightBytes = generator.model.tensorBytes
            let configuration = generator.model.configuration
            var random = SplitMix64(seed: 42)
            // Ordinary tokens (past the 17 control ones), as llama-bench feeds random ids.
            let ids = (0..<(promptTokens + generateTokens)).map { _ in
                Int32(17 + Int(random.next() % UInt64(configuration.vocabularySize - 17)))
            }
            let prompt = Array(ids.prefix(promptTokens))
            // One float32 key and value row per layer for every token the cache holds.
            let cacheBytesPerToken = configuration.layers * 2 * configuration.keyValueWidth * 4
            var measured:
                [(threads: Int, prefill: Double, decode: Double, firstToken: Double, bandwidth: Double, median: Double)] =
                    []
            var peakRSS = RSSPeak()
            for count in counts {
                var model = generator.model
                model.threads = count
                var runs:
                    [(prefill: Double, decode: Double, firstToken: Double, nanoseconds: UInt64, bandwidth: Double)] = []
                for run in 0...repeats {
                    // The bound beside each timed run: a triad measured once after all the runs
                    // read 26–45 GB/s on a shared machine, whatever the runs had met.
                    var bandwidth = Double.nan
                    if run > 0 {
                        peakRSS.note()  // the triad's 1 GiB of arrays would count otherwise
                        bandwidth = MachineProbe.triadBandwidth(workingSetBytes: 1 << 30, threads: count)
                        peakRSS.reset()
                    }
                    var cache = try model.makeCache(context: promptTokens + generateTokens)
                    let start = DispatchTime.now().uptimeNanoseconds
                    let logits = try model.forward(prompt, cache: &cache, logits: .last)
                    let prefilled = DispatchTime.now().uptimeNanoseconds
                    var greedy = Sampler(.greedy())
                    _ = logits.storage.withUnsafeBufferPointer { greedy.choose($0, history: prompt) }
                    let chosen = DispatchTime.now().uptimeNanoseconds
                    for id in ids.dropFirst(promptTokens) { _ = try model.forward([id], cache: &cache, logits: .last) }
                    let decoded = DispatchTime.now().uptimeNanoseconds
                    guard run > 0 else { continue }  // the first run warms caches and pages in the file
                    runs.append(
                        (
                            Double(promptTokens) / (Double(prefilled - start) / 1e9),
                            Double(generateTokens) / (Double(decoded - chosen) / 1e9), Double(chosen - start) / 1e6,
                            decoded - start, bandwidth
                        ))
                }
                let median = Self.medianRun(runs.map(\.nanoseconds))
                let bandwidths = runs.map(\.bandwidth).sorted()
                measured.append(
                    (
                        count, runs[median].prefill, runs[median].decode, runs[median].firstToken,
                        runs[median].bandwidth, bandwidths[(bandwidths.count - 1) / 2]
                    ))
            }
            peakRSS.note()
            // Decode at the middle of its steps reads every weight once and the cache at that depth.
            let bytesPerToken = Double(weightBytes + cacheBytesPerToken * (promptTokens + generateTokens / 2))
            let rows = measured.map { row in
                Row(
                    threads: row.threads, prefillTokensPerSecond: row.prefill, decodeTokensPerSecond: row.decode,
                    timeToFirstTokenMs: row.firstToken, decodeBytesPerToken: bytesPerToken,
                    memoryBandwidthGBs: row.bandwidth, memoryBandwidthMedianGBs: row.median,
                    decodeShareOfMemoryBound: bytesPerToken * row.decode / 1e9 / row.bandwidth)
            }
            let result = Result(
                model: ModelLibrary.smolLM2Name, precision: precision.rawValue, promptTokens: promptTokens,
                generateTokens: generateTokens, repeats: repeats, weightBytes: weightBytes, loadSeconds: loadSeconds,
                peakRSSMegabytes: peakRSS.megabytes, rows: rows)
            if json { return context.print(try Formatting.json(result)) }
            context.print(
                "\(result.model), \(precision.rawValue): pp\(promptTokens), tg\(generateTokens) after it, median of "
                    + "\(repeats); model ready in \(String(format: "%.2f", loadSeconds)) s, peak RSS "
                    + String(format: "%.0f MB", result.peakRSSMegabytes))
            for row in rows {
                context.print(
                    String(
                        format:
                            "  %d thread%@  prefill %7.1f tokens/s  decode %6.1f tokens/s  first token %6.1f ms  "
                            + "decode reads %.1f MB/token = %.0f%% of %.1f GB/s (the triad just before that run; "
                            + "median of the runs' triads %.1f GB/s)",
                        row.threads, row.threads == 1 ? " " : "s", row.prefillTokensPerSecond,
                        row.decodeTokensPerSecond, row.timeToFirstTokenMs, row.decodeBytesPerToken / 1e6,
                        row.decodeShareOfMemoryBound * 100, row.memoryBandwidthGBs, row.memoryBandwidthMedianGBs))
            }
        }
    }

    /// The process's peak RSS over the runs, leaving out the triads measured between them: the
    /// high-water mark is noted before each triad and reset after it (`/proc/self/clear_refs`).
    /// Where the reset is refused, the marks after the first triad would hold its 1 GiB, so only
    /// the first note counts (the warm-up run before it does what each timed run does).
    struct RSSPeak {
        private var marks: [Double] = []
        private var resets = true
        private var triads = 0

        /// Notes the high-water mark now.
        mutating func note() {
            if resets || triads == 0 { marks.append(BenchCommand.peakRSSMegabytes(of: getpid())) }
        }

        /// Sets the high-water mark back to the current RSS, after a triad.
        mutating func reset() {
            triads += 1
            guard resets else { return }
            resets = (try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)) != nil
        }

        var megabytes: Double { marks.max() ?? .nan }
    }
}
