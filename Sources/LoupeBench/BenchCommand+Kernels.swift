import ArgumentParser
import Foundation
import LoupeCommands
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTensor

extension BenchCommand {
    struct Kernels: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "kernels",
            abstract: "Every kernel at its default shapes, with the issue's ratios checked in one run.",
            discussion: """
                Measures the FP32 and INT8 peaks afresh (multiply-add loops, all cores), uses the workspace's memory \
                levels (measuring them first when it has no profile), runs `kernels bench` on every \
                kernel, checks flash against naive attention's outputs and the int8 matmul's error, \
                and reports each ratio beside its target.
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Seconds of repeats per kernel and shape.") var seconds = 0.5

        struct Check: Encodable {
            var name: String
            var value: Double
            var target: String
            var passed: Bool?
        }

        struct Result: Encodable {
            var machine: String
            /// The kernels OpenBLAS runs (see `BLAS.core`).
            var blasCore: String
            var threads: Int
            var fp32PeakGflops: Double
            var int8PeakGops: Double
            var memoryLevels: [BandwidthPlateau]
            var kernels: [KernelsCommand.Row]
            var attentionMaxAbsDifference: Float
            var int8RelativeError: Double
            var checks: [Check]
        }

        func run(in context: CommandContext) throws {
            let workspace = try context.roofline()
            let threads = ProcessInfo.processInfo.activeProcessorCount
            var stored = try KernelsCommand.cpuRoofs(workspace)
            if stored == nil {
                if !json {
                    context.print("no machine profile in the workspace: measuring one first (loupe roofline measure)")
                }
                _ = try measureCPUProfile(maxMebibytes: 1024, context: context)
                stored = try KernelsCommand.cpuRoofs(workspace)
            }
            guard let stored else { throw CommandFailure("the machine profile could not be read back") }
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "FP32 peak"))
            let peak = MachineProbe.fp32Peak(threads: threads)
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "INT8 peak"))
            let int8Peak = MachineProbe.int8Peak(threads: threads)
            let roofs = Roofs(peak: peak, int8Peak: int8Peak, levels: stored.roofs.levels)
            // A profile measured before Loupe had an int8 roof gains the one measured now, so the
            // Roofline panel judges int8 kernels against it.
            if stored.roofs.int8Peak == nil {
                try workspace.add(
                    [
                        KernelsCommand.int8Ceiling(
                            int8Peak, cores: threads,
                            measuredBy:
                                "measured by loupe bench kernels on \(ISO8601DateFormatter().string(from: Date()))")
                    ], toProfile: stored.id)
            }
            let jobs = KernelBench.all.flatMap { spec in spec.defaultShapes.map { (spec, $0) } }
            var measurements: [KernelBench.Measurement] = []
            for (index, (spec, shape)) in jobs.enumerated() {
                try context.reporter.checkCancellation()
                context.reporter.report(
                    JobProgress(completed: Double(index), total: Double(jobs.count + 2), detail: spec.name))
                measurements.append(KernelBench.measure(spec, shape: shape, threads: threads, seconds: seconds))
            }
            context.reporter.report(
                JobProgress(completed: Double(jobs.count), total: Double(jobs.count + 2), detail: "accuracy"))
            let difference = KernelBench.attentionDifference(.naive, .flash, length: 2048, headSize: 64)
            let int8Error = KernelBench.int8RelativeError(m: 1024, n: 1024, k: 1024)
            try KernelsCommand.store(measurements, profileID: stored.id, in: workspace)

            func find(_ kernel: String, _ shape: String) -> KernelBench.Measurement? {
                measurements.first { $0.kernel == kernel && $0.shape == shape }
            }
            var checks: [Check] = []
            func check(_ name: String, _ value: Double?, atLeast target: Double? = nil, atMost limit: Double? = nil) {
                guard let value else { return }
                let passed = target.map { value >= $0 } ?? limit.map { value <= $0 }
                let text = target.map { "≥ \($0)" } ?? limit.map { "≤ \($0)" } ?? "report"
                checks.append(Check(name: name, value: value, target: text, passed: passed))
            }
            let cube2048 = "2048x2048x2048"
            let cube1024 = "1024x1024x1024"
            check(
                "sgemm-openblas 2048³ / FP32 peak", find("sgemm-openblas", cube2048).map { $0.gflopsPerSecond / peak },
                atLeast: 0.8)
            if let blocked = find("matmul-blocked", cube1024), let blas = find("sgemm-openblas", cube1024),
                let naive = find("matmul-naive", cube1024), let int8 = find("matmul-int8", cube1024)
            {
                check(
                    "matmul-blocked / sgemm-openblas at 1024³", blocked.gflopsPerSecond / blas.gflopsPerSecond,
                    atLeast: 0.4)
                check(
                    "matmul-blocked / matmul-naive at 1024³", blocked.gflopsPerSecond / naive.gflopsPerSecond,
                    atLeast: 10)
                check("matmul-int8 speed / sgemm-openblas at 1024³", int8.gflopsPerSecond / blas.gflopsPerSecond)
                check("matmul-int8 speed / matmul-blocked at 1024³", int8.gflopsPerSecond / blocked.gflopsPerSecond)
            }
            if let dynamic = find("matmul-int8-dynamic", cube1024), let blas = find("sgemm-openblas", cube1024) {
                check(
                    "matmul-int8-dynamic speed / sgemm-openblas at 1024³",
                    dynamic.gflopsPerSecond / blas.gflopsPerSecond)
                check("matmul-int8-dynamic 1024³ / INT8 peak", dynamic.gflopsPerSecond / int8Peak)
            }
            check("matmul-int8 relative error (Frobenius)", int8Error, atMost: 0.01)
            for kernel in ["softmax-online", "layernorm", "softmax-three-pass"] {
                for m in measurements where m.kernel == kernel {
                    guard let level = roofs.level(forWorkingSet: m.footprintBytes) else { continue }
                    let fraction = m.gigabytesPerSecond / level.gigabytesPerSecond
                    // The target is for memory-bound runs beyond L2; a run that is compute-bound
                    // at its level (the roofline says so) is reported, not judged.
                    let judged =
                        kernel != "softmax-three-pass" && level.level != "L1" && level.level != "L2"
                        && roofs.bound(flopsPerByte: m.flopsPerByte, at: level) == "memory"
                    check(
                        "\(kernel) \(m.shape): GB/s / \(level.level) ceiling", fraction, atLeast: judged ? 0.6 : nil)
                }
            }
            if let naive = find("attention-naive", "2048x64"), let flash = find("attention-flash", "2048x64"),
                let blas = find("attention-blas", "2048x64")
            {
                check(
                    "attention-flash speed / attention-naive (T 2048, d 64)", naive.seconds / flash.seconds, atLeast: 2)
                check(
                    "attention-naive scratch / attention-flash scratch",
                    Double(naive.scratchBytes) / Double(max(1, flash.scratchBytes)), atLeast: 10)
                check("attention-flash speed / attention-blas (sgemm, materialised)", blas.seconds / flash.seconds)
            }
            check("attention max |flash − naive|", Double(difference), atMost: 1e-5)

            let result = Result(
                machine: KernelRun.thisMachine, blasCore: BLAS.core, threads: threads, fp32PeakGflops: peak,
                int8PeakGops: int8Peak,
                memoryLevels: roofs.levels, kernels: measurements.map { KernelsCommand.Row($0, roofs: roofs) },
                attentionMaxAbsDifference: difference, int8RelativeError: int8Error, checks: checks)
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                String(format: "FP32 peak %.1f GFLOP/s on %d threads (measured now, ", peak, threads)
                    + MachineProbe.fp32PeakMethod + ")")
            context.print("OpenBLAS kernels: " + result.blasCore)
            context.print(
                String(format: "INT8 peak %.1f GOP/s on %d threads (measured now, ", int8Peak, threads)
                    + MachineProbe.int8PeakMethod + ")")
            context.print(
                "memory levels: "
                    + roofs.levels.map { $0.level + String(format: " %.1f GB/s", $0.gigabytesPerSecond) }.joined(
                        separator: ", "))
            KernelsCommand.printTable(measurements, roofs: roofs, context: context)
            context.print("")
            for check in checks {
                let verdict = check.passed.map { $0 ? "ok  " : "MISS" } ?? "    "
                context.print(
                    "\(verdict) " + check.name.padding(toLength: 62, withPad: " ", startingAt: 0)
                        + String(format: "%12.4g  ", check.value) + check.target)
            }
            context.print("stored in \(context.session.displayPath) (kernel_runs, suite kernels)")
        }
    }
}
