import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeProfiling
import LoupeStore
import LoupeTensor

extension BenchCommand {
    /// `loupe bench embed`: MiniLM sentence-embedding throughput on this machine.
    struct Embed: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "embed",
            abstract: "MiniLM embedding throughput: sentences per second, batch 32, full fp32.",
            discussion: """
                Embeds the sentences (default: sample-data/bench/sentences-256.txt, 256 Cranfield \
                sentences of about 30 tokens) after one warm-up pass, several times, and reports the \
                median. scripts/bench/embed.sh runs sentence-transformers and the numpy reference on \
                the same sentences in the same run and prints the ratios.
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "A file of sentences, one per line.") var sentences = "sample-data/bench/sentences-256.txt"
        @Option(help: "Sentences per forward pass.") var batchSize = 32
        @Option(help: "Timed passes over all sentences (the median is reported).") var repeats = 5
        @Option(
            help:
                "The linear layers' arithmetic: fp32, or int8 (then each embedding's cosine to the fp32 one is reported too)."
        )
        var precision: Precision = .fp32
        @Option(
            help:
                "With int8: the widest kernel of the linear layers (amx: AMX tiles; vnni: AVX-512 VNNI; avx2: AVX2, products in int16; portable; default the widest this CPU has), to compare them on one machine."
        )
        var int8Kernel: QuantizedLinear.Form?
        @Option(
            help:
                "With int8: the widest form of the attention (amx: bf16 on AMX tiles; avx512: bf16 on AVX-512 BF16; fp32; default the widest this CPU has), to compare them on one machine."
        )
        var int8Attention: LoupeTensor.Kernels.AttentionForm?
        @Flag(
            help:
                "Also profile one pass per operation (time, GFLOP/s, FLOP/byte) and store it in the workspace's kernel_runs for the roofline."
        )
        var ops = false

        struct Result: Codable {
            var sentences: Int
            var batchSize: Int
            var meanTokens: Double
            var loadSeconds: Double
            var passSeconds: [Double]
            var sentencesPerSecond: Double
            var tokensPerSecond: Double
            var precision: String
            /// The kernels OpenBLAS runs (see `BLAS.core`).
            var blasCore: String
            /// With int8: the int8 kernel the linear layers ran (amx, vnni, avx2 or portable).
            var int8Kernel: String?
            /// With int8: the form the attention ran in (amx, avx512 or fp32; see `LoupeTensor.Kernels.AttentionForm`).
            var int8Attention: String?
            /// With int8: the lowest and the mean cosine between a sentence's int8 and fp32 embeddings.
            var minimumCosineToFP32: Double?
            var meanCosineToFP32: Double?
            var operations: [Operation]?
            /// FLOPs of one pass over the sentences (the operations' analytic counts), when profiled.
            var gflopsPerPass: Double?
            /// The FP32 peak measured now on every core, and the pass's share of it, when profiled.
            var fp32PeakGflops: Double?
            var fractionOfRoof: Double?
        }

        /// One operation kind of the forward pass over a whole profiled pass.
        struct Operation: Codable {
            var name: String
            var calls: Int
            var milliseconds: Double
            var share: Double
            var gflopsPerSecond: Double
            var flopsPerByte: Double
        }

        /// How the int8 line names the attention's form.
        private func attentionName(_ form: LoupeTensor.Kernels.AttentionForm) -> String {
            switch form {
            case .amx: "bf16 AMX"
            case .avx512: "bf16 AVX-512"
            case .fp32: "fp32"
            }
        }

        func run(in context: CommandContext) throws {
            let text: String
            do {
                text = try TextFile.read(sentences)
            } catch {
                throw CommandFailure("\(error) (run from the repository root, or give --sentences FILE)")
            }
            let lines = text.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            guard !lines.isEmpty else { throw CommandFailure("\(sentences): no sentences") }
            let restore = BenchCommand.narrowInt8Forms(kernel: int8Kernel, attention: int8Attention)
            defer { restore() }
            var watch = Stopwatch()
            let embedder = try context.session.models.miniLM(precision: precision)
            let loadSeconds = watch.lap()
            let tokens = lines.map { embedder.tokenizer.encode($0).count }
            _ = embedder.embed(Array(lines.prefix(batchSize)), batchSize: batchSize)
            var passes: [Double] = []
            var results: [SentenceEmbedder.Embedding] = []
            for index in 0..<max(1, repeats) {
                context.reporter.report(
                    JobProgress(completed: Double(index), total: Double(repeats), detail: "pass \(index + 1)"))
                watch = Stopwatch()
                results = embedder.embed(lines, batchSize: batchSize)
                passes.append(watch.lap())
                precondition(results.count == lines.count)
            }
            let median = passes.sorted()[passes.count / 2]
            var cosines: [Double] = []
            if precision != .fp32 {
                // The last timed pass's embeddings against fp32's.
                let reference = try context.session.models.miniLM().embed(lines, batchSize: batchSize)
                cosines = zip(results, reference).map { Double(SentenceEmbedder.cosine($0.vector, $1.vector)) }
            }
            var operations: [Operation]?
            var gflopsPerPass: Double?
            var peak: Double?
            if ops {
                let profile = OperationProfile()
                _ = embedder.embed(lines, batchSize: batchSize, profile: profile)
                let entries = profile.entriesByTime
                let total = Double(entries.reduce(0) { $0 + $1.nanoseconds })
                let meanTokens = Double(tokens.reduce(0, +)) / Double(tokens.count)
                let workload =
                    "\(lines.count) sentences, batch \(batchSize), mean \(String(format: "%.1f", meanTokens)) tokens"
                try context.roofline().record(
                    ForwardPassRecord.kernelRuns(
                        entries, precision: precision, workload: workload,
                        threads: ProcessInfo.processInfo.activeProcessorCount))
                gflopsPerPass = entries.reduce(0) { $0 + $1.flops } / 1e9
                peak = MachineProbe.fp32Peak(threads: ProcessInfo.processInfo.activeProcessorCount)
                operations = entries.map { entry in
                    Operation(
                        name: entry.name, calls: entry.calls, milliseconds: Double(entry.nanoseconds) / 1e6,
                        share: Double(entry.nanoseconds) / max(1, total), gflopsPerSecond: entry.gflopsPerSecond,
                        flopsPerByte: entry.flopsPerByte)
                }
            }
            let attention = LoupeTensor.Kernels.AttentionForm.processWidest.usable(
                headSize: embedder.encoder.configuration.headSize)
            let result = Result(
                sentences: lines.count, batchSize: batchSize,
                meanTokens: Double(tokens.reduce(0, +)) / Double(tokens.count), loadSeconds: loadSeconds,
                passSeconds: passes, sentencesPerSecond: Double(lines.count) / median,
                tokensPerSecond: Double(tokens.reduce(0, +)) / median, precision: precision.rawValue,
                blasCore: BLAS.core,
                int8Kernel: precision == .fp32 ? nil : QuantizedLinear.Form.processWidest.rawValue,
                int8Attention: precision == .fp32 ? nil : attention.rawValue,
                minimumCosineToFP32: cosines.min(),
                meanCosineToFP32: cosines.isEmpty ? nil : cosines.reduce(0, +) / Double(cosines.count),
                operations: operations, gflopsPerPass: gflopsPerPass, fp32PeakGflops: peak,
                fractionOfRoof: gflopsPerPass.flatMap { work in peak.map { work / median / $0 } })
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                String(
                    format:
                        "loupe MiniLM \(precision.rawValue)  %.1f sentences/s  (%.0f tokens/s; %d sentences of %.1f tokens, batch %d, median of %d passes; load %.2f s; OpenBLAS %@)",
                    result.sentencesPerSecond, result.tokensPerSecond, result.sentences, result.meanTokens, batchSize,
                    passes.count, loadSeconds, result.blasCore))
            if let lowest = result.minimumCosineToFP32, let mean = result.meanCosineToFP32 {
                context.print(
                    String(
                        format:
                            "  %@ (%@ kernel, %@ attention): cosine to the fp32 embedding, lowest %.5f, mean %.5f over the %d sentences",
                        precision.rawValue, result.int8Kernel ?? "?", attentionName(attention), lowest, mean,
                        lines.count))
            }
            if let work = gflopsPerPass, let peak, let fraction = result.fractionOfRoof {
                context.print(
                    String(
                        format:
                            "  %.1f GFLOP a pass: %.1f GFLOP/s end to end = %.0f%% of the FP32 roof (%.1f GFLOP/s on %d cores, measured now)",
                        work, work / median, fraction * 100, peak, ProcessInfo.processInfo.activeProcessorCount))
            }
            if operations != nil {
                context.print(
                    "  stored as suite minilm-forward\(precision == .fp32 ? "" : "-int8") in \(context.session.displayPath), table kernel_runs"
                )
                context.print(
                    "  per operation, one profiled pass (time summed over the cores' concurrent batches; GFLOP/s per core):"
                )
            }
            for operation in operations ?? [] {
                context.print(
                    "  " + operation.name.padding(toLength: 28, withPad: " ", startingAt: 0)
                        + String(
                            format: "%5d calls %8.1f ms %5.1f%%  %7.1f GFLOP/s  %6.1f FLOP/byte", operation.calls,
                            operation.milliseconds, operation.share * 100, operation.gflopsPerSecond,
                            operation.flopsPerByte))
            }
        }
    }
}

extension BenchCommand {
    /// Narrows the process's int8 kernel and int8 attention to the forms given (nil leaves one as
    /// it is) for one command, and returns what puts them back: the caps are the process's, and a
    /// notebook or the TUI runs many commands in one process.
    static func narrowInt8Forms(
        kernel: QuantizedLinear.Form?, attention: LoupeTensor.Kernels.AttentionForm?
    ) -> () -> Void {
        let kernelBefore = QuantizedLinear.Form.processWidest
        let attentionBefore = LoupeTensor.Kernels.AttentionForm.processWidest
        if let kernel { QuantizedLinear.Form.processWidest = kernel }
        if let attention { LoupeTensor.Kernels.AttentionForm.processWidest = attention }
        return {
            QuantizedLinear.Form.processWidest = kernelBefore
            LoupeTensor.Kernels.AttentionForm.processWidest = attentionBefore
        }
    }
}
