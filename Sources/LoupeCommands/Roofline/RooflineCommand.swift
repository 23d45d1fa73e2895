import ArgumentParser
import Foundation
import LoupeKit
import LoupeProfiling
import LoupeStore

/// `loupe roofline …`: this machine's compute and bandwidth ceilings.
struct RooflineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roofline",
        abstract: "Measure this machine's compute and bandwidth ceilings.",
        subcommands: [Measure.self]
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
}
