import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTensor

extension RooflineCommand {
    /// `loupe roofline forward smollm2 --tokens 512`: SmolLM2's prefill and decode op by op, as
    /// kernel runs the Roofline panel places.
    struct Forward: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Time SmolLM2's prefill and a decode step op by op and record them for the Roofline panel.",
            discussion: """
                Runs a prefill of --tokens random token ids in one pass (after a warm-up pass that pages \
                the file in), then --steps decode steps of one token each after --depth cached tokens \
                (the prompt's length when absent), each operation timed (products, attention, norms, \
                RoPE, SwiGLU, the head) with its analytic FLOPs and bytes. They are stored as kernel \
                runs, suites smollm2-prefill-q8 and smollm2-decode-q8 (-f32 for --precision f32), which \
                `roofline show` and the Roofline panel (4) place: in q8 the products are integer \
                operations, judged against the INT8 roof, the rest against FP32. Decode reads every \
                weight once per token and sits by the memory roof; prefill reuses each weight across \
                the prompt's tokens and climbs towards the compute roof.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The model: smollm2 (MiniLM's passes come from `loupe embed --profile`).")
        var model = "smollm2"
        @Option(help: "Tokens in the prefill.") var tokens = 512
        @Option(help: "Tokens in the cache before the decode steps (--tokens when absent).") var depth: Int?
        @Option(help: "Decode steps timed (their operations are summed).") var steps = 16
        @Option(help: "Threads the products split their rows over.") var threads = 1
        @Option(help: "q8 (the file's quantized weights) or f32 (every weight dequantized).")
        var precision: LlamaPrecision = .q8
        @Flag(help: "Print JSON.") var json = false

        struct Operation: Encodable {
            var name: String
            var calls: Int
            var milliseconds: Double
            var gflop: Double
            var megabytes: Double
            var gflopsPerSecond: Double
            var flopsPerByte: Double
            var precision: String
        }

        struct Pass: Encodable {
            var suite: String
            var workload: String
            var milliseconds: Double
            var operations: [Operation]
        }

        func validate() throws {
            guard model.lowercased() == "smollm2" else {
                throw ValidationError(
                    "\(UntrustedText.sanitized(model)): roofline forward runs smollm2 "
                        + "(MiniLM's forward pass: loupe embed --profile TEXT)")
            }
            let depth = depth ?? tokens
            guard tokens >= 1, steps >= 1, depth >= 0, max(tokens, depth + steps) <= 8192 else {
                throw ValidationError("--tokens, --steps at least 1, --depth at least 0, within the context of 8192")
            }
            if threads < 1 { throw ValidationError("--threads: at least 1") }
        }

        func run(in context: CommandContext) throws {
            var model = try context.session.models.smolLM2(precision: precision).model
            model.threads = threads
            let vocabulary = model.configuration.vocabularySize
            var random = SplitMix64(seed: 42)
            let depth = depth ?? tokens
            // Ordinary tokens (past the 17 control ones), as `bench generate` and llama-bench use.
            let ids = (0..<max(tokens, depth + steps)).map { _ in
                Int32(17 + Int(random.next() % UInt64(vocabulary - 17)))
            }
            var warm = try model.makeCache(context: tokens)
            _ = try model.forward(Array(ids.prefix(tokens)), cache: &warm)
            try context.reporter.checkCancellation()

            let prefill = OperationProfile()
            var cache = try model.makeCache(context: tokens)
            _ = try model.forward(Array(ids.prefix(tokens)), cache: &cache, profile: prefill)
            try context.reporter.checkCancellation()

            let decode = OperationProfile()
            var decodeCache = try model.makeCache(context: depth + steps)
            if depth > 0 { _ = try model.forward(Array(ids.prefix(depth)), cache: &decodeCache) }
            for id in ids[depth..<(depth + steps)] {
                _ = try model.forward([id], cache: &decodeCache, profile: decode)
            }

            let suffix = "\(precision.rawValue)"
            let threadsText = "\(threads) thread\(threads == 1 ? "" : "s")"
            let passes = [
                record(
                    prefill, suite: "smollm2-prefill-" + suffix, workload: "prefill \(tokens) tokens, \(threadsText)"),
                record(
                    decode, suite: "smollm2-decode-" + suffix,
                    workload: "\(steps) decode step\(steps == 1 ? "" : "s") at depth \(depth), \(threadsText)"),
            ]
            let machine = KernelRun.thisMachine
            let measuredAt = Date()
            try context.roofline().record(
                passes.flatMap { pass in
                    pass.operations.map { op in
                        KernelRun(
                            suite: pass.suite, kernel: op.name, workload: pass.workload, calls: op.calls,
                            nanoseconds: Int64(op.milliseconds * 1e6), flops: op.gflop * 1e9, bytes: op.megabytes * 1e6,
                            threads: 1, machine: machine, measuredAt: measuredAt,
                            flopsByPrecision: op.precision == "FP32" ? nil : [op.precision: op.gflop * 1e9])
                    }
                })
            if json { return context.print(try Formatting.json(passes)) }
            for pass in passes {
                context.print(
                    "\(pass.suite): \(pass.workload), " + RooflineFormat.duration(pass.milliseconds / 1000)
                        + " (the operations' sum)")
                context.print("      time  share  calls    GFLOP       MB         rate   FLOP/B  operation")
                for op in pass.operations {
                    context.print(
                        RooflineFormat.duration(op.milliseconds / 1000).leftPadded(to: 10)
                            + String(
                                format: " %5.1f%% %6d %8.4f %8.2f ",
                                100 * op.milliseconds / max(pass.milliseconds, 1e-9), op.calls, op.gflop, op.megabytes)
                            + RooflineFormat.rate(op.gflopsPerSecond, unit: RooflineFormat.operations(op.precision))
                            .leftPadded(to: 12) + " " + RooflineFormat.intensity(op.flopsPerByte).leftPadded(to: 8)
                            + "  " + op.name + (op.precision == "FP32" ? "" : " (\(op.precision))"))
                }
                context.print("")
            }
            context.print(
                "stored in \(context.session.displayPath) (table kernel_runs); `loupe roofline show` and the Roofline "
                    + "panel (4) place them, the products under INT8")
        }

        /// A profiled pass's operations, most time first, each with the precision it is judged at.
        private func record(_ profile: OperationProfile, suite: String, workload: String) -> Pass {
            let operations = profile.entriesByTime.map { entry in
                let integer = precision == .q8 && LlamaModel.Operation(rawValue: entry.name)?.isProduct == true
                return Operation(
                    name: entry.name, calls: entry.calls, milliseconds: Double(entry.nanoseconds) / 1e6,
                    gflop: entry.flops / 1e9, megabytes: entry.bytes / 1e6, gflopsPerSecond: entry.gflopsPerSecond,
                    flopsPerByte: entry.flopsPerByte, precision: integer ? "INT8" : "FP32")
            }
            return Pass(
                suite: suite, workload: workload, milliseconds: operations.reduce(0) { $0 + $1.milliseconds },
                operations: operations)
        }
    }
}
