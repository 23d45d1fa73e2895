import ArgumentParser
import Foundation
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTUI

/// `loupe roofline …`: this machine's compute and bandwidth ceilings.
struct RooflineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roofline",
        abstract: "Measure this machine's compute and bandwidth ceilings.",
        subcommands: [Measure.self, ImportNCU.self]
    )

    struct Measure: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "FP32 peak (FMA loop, all cores and one) and bandwidth per memory level (triad sweep, plateaus from the curve).",
            discussion: """
                The sweep doubles the working set from 16 KiB to --max-bytes (three Float32 arrays); \
                memory levels are the flat stretches of the measured curve, named L1, L2, … and \
                DRAM by order. DRAM needs working sets well past the last cache (several GiB here).
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Largest working set of the sweep, in MiB.") var maxMebibytes = 4096

        struct Result: Encodable {
            var fp32PeakAllCoresGflops: Double
            var fp32PeakOneCoreGflops: Double
            var cores: Int
            var sweep: [BandwidthSample]
            var plateaus: [BandwidthPlateau]
            var reportedCacheBytes: [Int]
        }

        func run(in context: CommandContext) throws {
            let cores = ProcessInfo.processInfo.activeProcessorCount
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "FP32 peak"))
            let peakAll = MachineProbe.fp32Peak(threads: cores)
            let peakOne = MachineProbe.fp32Peak(threads: 1)
            var sweep: [BandwidthSample] = []
            var size = 16 * 1024
            while size <= maxMebibytes * 1024 * 1024 {
                try context.reporter.checkCancellation()
                context.reporter.report(
                    JobProgress(
                        completed: Double(sweep.count), total: nil, detail: "triad \(Formatting.bytes(Int64(size)))"))
                sweep.append(
                    BandwidthSample(
                        workingSetBytes: size,
                        gigabytesPerSecond: MachineProbe.triadBandwidth(workingSetBytes: size, threads: cores)))
                size *= 2
            }
            let plateaus = PlateauDetector.plateaus(sweep)
            let method = "measured here by loupe roofline measure on \(ISO8601DateFormatter().string(from: Date()))"
            var ceilings = [
                CeilingRecord(
                    kind: "compute", name: "FP32 (\(cores) cores)", value: peakAll,
                    provenance: "FMA loop, AVX2+FMA, \(method)"),
                CeilingRecord(
                    kind: "compute", name: "FP32 (1 core)", value: peakOne, provenance: "FMA loop, AVX2+FMA, \(method)"),
            ]
            for plateau in plateaus {
                ceilings.append(
                    CeilingRecord(
                        kind: "memory", name: plateau.level, value: plateau.gigabytesPerSecond,
                        provenance:
                            "triad plateau over \(Formatting.bytes(Int64(plateau.smallestBytes)))–\(Formatting.bytes(Int64(plateau.largestBytes))), \(method)"
                    ))
            }
            try context.workspace().record(
                MachineProfileRecord(
                    machine: BenchCommand.Embed.machine(), cores: cores, sweepJSON: try Formatting.json(sweep)),
                ceilings: ceilings)
            let result = Result(
                fp32PeakAllCoresGflops: peakAll, fp32PeakOneCoreGflops: peakOne, cores: cores, sweep: sweep,
                plateaus: plateaus, reportedCacheBytes: MachineProbe.cacheSizes())
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                String(format: "FP32 peak   %.1f GFLOP/s on %d cores, %.1f on one (FMA loop)", peakAll, cores, peakOne))
            context.print("triad sweep (\(cores) threads):")
            for sample in sweep {
                context.print(
                    "  "
                        + Formatting.bytes(Int64(sample.workingSetBytes)).padding(
                            toLength: 11, withPad: " ", startingAt: 0)
                        + String(format: "%8.1f GB/s", sample.gigabytesPerSecond))
            }
            context.print("ceilings found on the curve:")
            for plateau in result.plateaus {
                let ridge = peakAll / plateau.gigabytesPerSecond
                context.print(
                    "  " + plateau.level.padding(toLength: 5, withPad: " ", startingAt: 0)
                        + String(format: "%8.1f GB/s  ridge at %.1f FLOP/byte", plateau.gigabytesPerSecond, ridge)
                        + "  (\(Formatting.bytes(Int64(plateau.smallestBytes)))–\(Formatting.bytes(Int64(plateau.largestBytes))))"
                )
            }
            let caches = result.reportedCacheBytes.map { Formatting.bytes(Int64($0)) }.joined(separator: ", ")
            if !caches.isEmpty { context.print("the OS reports caches of \(caches) (not used to find the levels)") }
            context.print("stored in \(context.session.displayPath) (tables machine_profiles, ceilings)")
        }
    }

    struct ImportNCU: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "import-ncu",
            abstract: "Import GPU kernels from an Nsight Compute CSV export (details or raw page) into the workspace.",
            discussion: """
                Export with `ncu --set roofline --csv --log-file out.csv ./app` (details page) or \
                `ncu --metrics ... --csv --page raw`. Launches of a kernel are summed; FLOPs come from \
                the SASS counters (add + mul + 2 x fma, per precision), bytes from dram__bytes.sum, time \
                from gpu__time_duration.sum. Stored in kernel_runs as suite ncu:<file>, one transaction.
                """
        )

        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The CSV export.", valueName: "file")) var file: String

        func run(in context: CommandContext) throws {
            let name = (file as NSString).lastPathComponent
            // ncu writes UTF-8; a Windows export in a legacy code page still reads as Latin-1.
            guard
                let text = (try? String(contentsOfFile: file, encoding: .utf8))
                    ?? (try? String(contentsOfFile: file, encoding: .isoLatin1))
            else {
                throw CommandFailure("\(file): cannot be read")
            }
            let kernels: [NsightKernel]
            do {
                kernels = try NsightComputeImport.parse(text, file: name)
            } catch {
                throw CommandFailure(error.description)
            }
            guard !kernels.isEmpty else { throw CommandFailure("\(name): the export holds no kernel launches") }
            let measuredAt = Date()
            try context.workspace().record(
                kernels.map { kernel in
                    KernelRun(
                        suite: "ncu:\(name)", kernel: kernel.name,
                        workload: "launches \(kernel.launchIDs.joined(separator: ","))",
                        calls: kernel.launchIDs.count, nanoseconds: Int64(kernel.nanoseconds.rounded()),
                        flops: kernel.flops.values.reduce(0, +), bytes: kernel.bytes["DRAM"] ?? 0, threads: 1,
                        machine: "GPU device \(kernel.device.isEmpty ? "?" : kernel.device)", measuredAt: measuredAt)
                })
            context.print(
                "imported \(Formatting.count(kernels.count, "kernel")) from \(name) into \(context.session.displayPath) (suite ncu:\(name))"
            )
            for kernel in kernels {
                let seconds = kernel.nanoseconds / 1e9
                let flops = kernel.flops.values.reduce(0, +)
                let bytes = kernel.bytes["DRAM"] ?? 0
                let precisions = kernel.flops.filter { $0.value > 0 }.keys.sorted().joined(separator: "+")
                context.print(
                    "  "
                        + TextWidth.truncate(kernel.name, toColumns: 48).padding(
                            toLength: 49, withPad: " ", startingAt: 0)
                        + String(
                            format: "%3d launches %9.3f ms %9.1f GFLOP/s %7.2f FLOP/byte %@", kernel.launchIDs.count,
                            kernel.nanoseconds / 1e6, seconds > 0 ? flops / seconds / 1e9 : 0,
                            bytes > 0 ? flops / bytes : 0,
                            precisions.isEmpty ? "(no FLOP counters)" : precisions))
            }
        }
    }
}
