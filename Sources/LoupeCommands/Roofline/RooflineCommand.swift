import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore

/// `loupe roofline …`: this machine's compute and bandwidth ceilings.
struct RooflineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roofline",
        abstract: "Measure this machine's compute and bandwidth ceilings.",
        subcommands: [Measure.self, ImportNCU.self, Show.self, Compare.self, Export.self, Forward.self]
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

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Largest working set of the sweep, in MiB.") var maxMebibytes = 4096

        struct Result: Encodable {
            var fp32PeakAllCoresGflops: Double
            var fp32PeakOneCoreGflops: Double
            /// Int8 multiply-add loop, GOP/s (a multiply-add is 2).
            var int8PeakAllCoresGops: Double
            var int8PeakOneCoreGops: Double
            var int8Method: String
            var cores: Int
            var sweep: [BandwidthSample]
            var plateaus: [BandwidthPlateau]
            var reportedCacheBytes: [Int]
        }

        /// Measures the peaks and the sweep, and stores them as a CPU profile; returns the result
        /// and the profile's id. (Also what `bench kernels` runs when a workspace has no profile.)
        static func characterise(maxMebibytes: Int, context: CommandContext) throws -> (Result, Int64) {
            let cores = ProcessInfo.processInfo.activeProcessorCount
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "FP32 peak"))
            let peakAll = MachineProbe.fp32Peak(threads: cores)
            let peakOne = MachineProbe.fp32Peak(threads: 1)
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "INT8 peak"))
            let int8All = MachineProbe.int8Peak(threads: cores)
            let int8One = MachineProbe.int8Peak(threads: 1)
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
                    provenance: "FMA loop, \(MachineProbe.fp32PeakMethod), \(method)", precision: "FP32"),
                CeilingRecord(
                    kind: "compute", name: "FP32 (1 core)", value: peakOne,
                    provenance: "FMA loop, \(MachineProbe.fp32PeakMethod), \(method)",
                    precision: "FP32"),
                KernelsCommand.int8Ceiling(int8All, cores: cores, measuredBy: method),
                KernelsCommand.int8Ceiling(int8One, cores: 1, measuredBy: method),
            ]
            for plateau in plateaus {
                ceilings.append(
                    CeilingRecord(
                        kind: "memory", name: plateau.level, value: plateau.gigabytesPerSecond,
                        provenance:
                            "triad plateau over \(Formatting.bytes(Int64(plateau.smallestBytes)))–\(Formatting.bytes(Int64(plateau.largestBytes))), \(method)"
                    ))
            }
            let id = try context.roofline().record(
                MachineProfileRecord(
                    machine: KernelRun.thisMachine, cores: cores, sweepJSON: try Formatting.json(sweep)),
                ceilings: ceilings)
            return (
                Result(
                    fp32PeakAllCoresGflops: peakAll, fp32PeakOneCoreGflops: peakOne, int8PeakAllCoresGops: int8All,
                    int8PeakOneCoreGops: int8One, int8Method: MachineProbe.int8PeakMethod, cores: cores, sweep: sweep,
                    plateaus: plateaus, reportedCacheBytes: MachineProbe.cacheSizes()), id
            )
        }

        func run(in context: CommandContext) throws {
            let (result, _) = try Self.characterise(maxMebibytes: maxMebibytes, context: context)
            let (peakAll, peakOne, cores, sweep) = (
                result.fp32PeakAllCoresGflops, result.fp32PeakOneCoreGflops, result.cores, result.sweep
            )
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                String(format: "FP32 peak   %.1f GFLOP/s on %d cores, %.1f on one (FMA loop)", peakAll, cores, peakOne))
            context.print(
                String(
                    format: "INT8 peak   %.1f GOP/s on %d cores, %.1f on one", result.int8PeakAllCoresGops, cores,
                    result.int8PeakOneCoreGops) + " (\(result.int8Method))")
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
                the SASS counters (add + mul + 2 x fma, per precision) and the tensor pipe (512 per \
                instruction, NERSC's convention, as precision Tensor), bytes from dram__bytes.sum, time \
                from gpu__time_duration.sum, else from sm__cycles_elapsed.avg / .per_second (the NERSC \
                metric set). Stored in kernel_runs as suite ncu:<file>, one transaction.
                """
        )

        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The CSV export.", valueName: "file")) var file: String
        @Option(
            help: ArgumentHelp(
                "The GPU it ran on, for the datasheet roofs when the export has no peak_sustained metrics (e.g. h100-sxm, h100-pcie, h200, a100-80gb).",
                valueName: "name"))
        var gpu: String?

        func run(in context: CommandContext) throws {
            let name = (file as NSString).lastPathComponent
            // ncu writes UTF-8; a Windows export in a legacy code page still reads as Latin-1.
            let bytes: [UInt8]
            do {
                bytes = try TextFile.bytes(file)
            } catch {
                throw CommandFailure(error.description)
            }
            let text =
                TextFile.firstInvalidUTF8Offset(bytes) == nil
                ? String(decoding: bytes, as: UTF8.self)
                : String(bytes.map { Character(Unicode.Scalar($0)) })
            let kernels: [NsightKernel]
            do {
                kernels = try NsightComputeImport.parse(text, file: name)
            } catch {
                throw CommandFailure(error.description)
            }
            guard !kernels.isEmpty else { throw CommandFailure("\(name): the export holds no kernel launches") }
            if let gpu, GPUDatasheet.matching(gpu) == nil {
                throw CommandFailure(
                    "--gpu \(gpu): not in the datasheet table (\(GPUDatasheet.all.map(\.name).joined(separator: ", ")))"
                )
            }
            let workspace = try context.roofline()
            let profile = try Self.profile(for: kernels, file: name, gpu: gpu, workspace: workspace)
            let measuredAt = Date()
            try workspace.record(
                kernels.map { kernel in
                    KernelRun(
                        suite: "ncu:\(name)", kernel: kernel.name,
                        workload: "launches \(kernel.launchIDs.joined(separator: ","))",
                        calls: kernel.launchIDs.count, nanoseconds: Int64(kernel.nanoseconds.rounded()),
                        flops: kernel.flops.values.reduce(0, +), bytes: kernel.bytes["DRAM"] ?? 0, threads: 1,
                        machine: profile?.name ?? "GPU device \(kernel.device.isEmpty ? "?" : kernel.device)",
                        measuredAt: measuredAt, profileID: profile?.id, flopsByPrecision: kernel.flops,
                        bytesByLevel: kernel.bytes.isEmpty ? nil : kernel.bytes)
                })
            if let profile {
                context.print("roofs: \(profile.name), \(profile.source)")
            } else {
                context.print(
                    "no roofs: the export has no peak_sustained metrics and names no GPU in the table; pass --gpu NAME")
            }
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
                            format: "%3d launches %9.3f ms %9.1f GFLOP/s %7.2f FLOP/byte ", kernel.launchIDs.count,
                            kernel.nanoseconds / 1e6, seconds > 0 ? flops / seconds / 1e9 : 0,
                            bytes > 0 ? flops / bytes : 0)
                        // `%@` with a Swift String prints "(null)" on Linux: strings are appended.
                        + (precisions.isEmpty ? "(no FLOP counters)" : precisions) + "; "
                        + (kernel.timeSources.isEmpty
                            ? "no time"
                            : "time: " + Self.ordered(kernel.timeSources).map(Self.label).joined(separator: "+")))
            }
            context.print(Self.timeSummary(kernels))
            context.print(Self.flopSummary(kernels))
            if kernels.contains(where: { ($0.flops[NsightComputeImport.tensorPrecision] ?? 0) > 0 }) {
                context.print(
                    "note: \(NsightComputeImport.tensorPrecision) FLOPs are "
                        + String(format: "%.0f", NsightComputeImport.tensorFLOPsPerInstruction)
                        + " per tensor-pipe instruction, NERSC's convention (a V100 HMMA.884); newer GPUs' instructions"
                        + " can do more (an A100 HMMA.16816 does 4096), so they may be too low. They count in the"
                        + " GFLOP/s and FLOP/byte above, and no roof is of their precision.")
            }
            for kernel in kernels where kernel.timedLaunches < kernel.launchIDs.count {
                context.print(
                    "warning: \(name): kernel \(kernel.name): "
                        + (kernel.timedLaunches == 0
                            ? "no gpu__time_duration.sum, so its time and GFLOP/s are unknown (shown as 0): it has no"
                                + " sm__cycles_elapsed.avg and .per_second (nor their smsp__ forms) to derive them from"
                                + " either"
                            : "\(kernel.launchIDs.count - kernel.timedLaunches) of \(kernel.launchIDs.count) launches"
                                + " have neither gpu__time_duration.sum nor sm__cycles_elapsed.avg and .per_second,"
                                + " so its time is too low")
                        + "; export with --metrics gpu__time_duration.sum (or"
                        + " sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second) or --section SpeedOfLight")
            }
        }

        /// A kernel's time sources in a fixed order (measured first), for stable output.
        private static func ordered(_ sources: Set<NsightKernel.TimeSource>) -> [NsightKernel.TimeSource] {
            NsightKernel.TimeSource.allCases.filter(sources.contains)
        }

        /// A time source in a kernel's line.
        private static func label(_ source: NsightKernel.TimeSource) -> String {
            switch source {
            case .duration: "gpu__time_duration"
            case .smCycles: "sm cycles"
            case .smspCycles: "smsp cycles"
            }
        }

        /// "time from gpu__time_duration.sum for 2 kernels, from sm__cycles_elapsed.avg ÷
        /// .per_second for 1 kernel; no time for 1 kernel: k".
        static func timeSummary(_ kernels: [NsightKernel]) -> String {
            let sources = NsightKernel.TimeSource.allCases.compactMap { source in
                let count = kernels.filter { $0.timeSources.contains(source) }.count
                return count == 0 ? nil : "from \(source.rawValue) for \(Formatting.count(count, "kernel"))"
            }
            let untimed = kernels.filter(\.timeSources.isEmpty)
            return
                ((sources.isEmpty ? [] : ["time " + sources.joined(separator: ", ")])
                + (untimed.isEmpty
                    ? [] : ["no time for \(Formatting.count(untimed.count, "kernel")): \(names(untimed))"]))
                .joined(separator: "; ")
        }

        /// "FLOPs from SASS counters (add + mul + 2 × fma) for 2 kernels, from the tensor pipe
        /// (512 per instruction) for 1 kernel; no FLOP counters for 1 kernel: k".
        static func flopSummary(_ kernels: [NsightKernel]) -> String {
            let sources = NsightKernel.FLOPSource.allCases.compactMap { source in
                let count = kernels.filter { $0.flopSources.values.contains(source) }.count
                let name =
                    source == .tensorPipe
                    ? source.rawValue
                        + String(format: " (%.0f per instruction)", NsightComputeImport.tensorFLOPsPerInstruction)
                    : source.rawValue
                return count == 0 ? nil : "from \(name) for \(Formatting.count(count, "kernel"))"
            }
            let uncounted = kernels.filter(\.flopSources.isEmpty)
            return
                ((sources.isEmpty ? [] : ["FLOPs " + sources.joined(separator: ", ")])
                + (uncounted.isEmpty
                    ? [] : ["no FLOP counters for \(Formatting.count(uncounted.count, "kernel")): \(names(uncounted))"]))
                .joined(separator: "; ")
        }

        /// The first few kernels' names, shortened, and how many more.
        private static func names(_ kernels: [NsightKernel]) -> String {
            let shown = kernels.prefix(3).map { TextWidth.truncate(UntrustedText.sanitized($0.name), toColumns: 40) }
            return shown.joined(separator: ", ") + (kernels.count > 3 ? " and \(kernels.count - 3) more" : "")
        }

        /// The GPU profile the kernels are judged against: from the export's peak_sustained
        /// metrics (at the profiled clock), else from the datasheet for --gpu or the device's
        /// name. Datasheet profiles are shared between imports of the same GPU.
        static func profile(for kernels: [NsightKernel], file: String, gpu: String?, workspace: RooflineTables)
            throws
            -> (id: Int64, name: String, source: String)?
        {
            let device = kernels.map(\.device).first { !$0.isEmpty && !$0.allSatisfy(\.isNumber) }
            var peaks: [String: Double] = [:]
            for kernel in kernels { peaks.merge(kernel.peaks) { max($0, $1) } }
            let datasheet = (gpu ?? device).flatMap(GPUDatasheet.matching)
            if !peaks.isEmpty {
                let name = "\(device ?? datasheet?.name ?? "GPU") (ncu \(file))"
                let source =
                    "peak_sustained × clock from \(file), at the profiled clock (base, unless --clock-control none)"
                let levels = ["L1", "L2", "DRAM"]
                var ceilings = peaks.filter { !levels.contains($0.key) }.sorted { $0.key < $1.key }.map {
                    CeilingRecord(kind: "compute", name: $0.key, value: $0.value, provenance: source, precision: $0.key)
                }
                for level in levels {
                    if let value = peaks[level] {
                        ceilings.append(CeilingRecord(kind: "memory", name: level, value: value, provenance: source))
                    }
                }
                // The SASS counters have no tensor-core peaks: the datasheet's come along, marked.
                if let datasheet {
                    let measured = Set(ceilings.compactMap(\.precision))
                    for roof in datasheet.compute
                    where roof.name.contains("tensor") || !measured.contains(roof.precision) {
                        ceilings.append(
                            CeilingRecord(
                                kind: "compute", name: roof.name, value: roof.gflops,
                                provenance: "\(datasheet.name) datasheet at boost clock: \(datasheet.source)",
                                precision: roof.precision))
                    }
                }
                // Importing the same export again reuses its profile.
                if let existing = try workspace.machineProfile(named: name, kind: "gpu"), let id = existing.id,
                    try workspace.ceilings(profileID: id).map(\.value) == ceilings.map(\.value)
                {
                    return (id, name, source)
                }
                let id = try workspace.record(
                    MachineProfileRecord(machine: name, cores: 0, sweepJSON: "[]", kind: "gpu"), ceilings: ceilings)
                return (id, name, source)
            }
            guard let datasheet else { return nil }
            if let existing = try workspace.machineProfile(named: datasheet.name, kind: "gpu"), let id = existing.id {
                return (id, datasheet.name, datasheet.source)
            }
            var ceilings = datasheet.compute.map {
                CeilingRecord(
                    kind: "compute", name: $0.name, value: $0.gflops, provenance: datasheet.source,
                    precision: $0.precision)
            }
            ceilings.append(
                CeilingRecord(
                    kind: "memory", name: datasheet.memoryName, value: datasheet.memoryGigabytesPerSecond,
                    provenance: datasheet.source))
            let id = try workspace.record(
                MachineProfileRecord(machine: datasheet.name, cores: 0, sweepJSON: "[]", kind: "gpu"),
                ceilings: ceilings)
            return (id, datasheet.name, datasheet.source)
        }
    }

    /// Picks a profile by 1-based number or by a piece of its name, and a precision.
    struct ProfileOptions: ParsableArguments {
        @Option(help: "The machine profile: its number in `roofline show` (1 = this CPU) or part of its name.")
        var profile: String = "1"
        @Option(help: "The precision to place kernels at (FP32, FP64, FP16); the profile's first when absent.")
        var precision: String?

        /// The profile and precision asked for, by the rule the panel and the MCP tool share
        /// (``RooflineModel/select(profile:precision:argument:)``).
        func resolve(_ model: RooflineModel) throws -> (RooflineModel.Profile, String) {
            do {
                let chosen = try model.select(profile: profile, precision: precision, argument: "--profile")
                return (chosen.profile, chosen.precision)
            } catch {
                throw CommandFailure(error.description)
            }
        }
    }

    struct Show: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "The roofline as a table: each profile's roofs, and its kernels placed under them.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var options: ProfileOptions
        @Option(
            help:
                "Only the MiniLM forward passes this trace recorded (an agent's searches), what p shows from a trace step."
        )
        var trace: Int64?
        @Option(help: "With --trace: only the forward pass at this span or under it (its ordinal).") var span: Int?

        func run(in context: CommandContext) throws {
            // A trace's forward passes are read from the SQLite file's traces and corpus.
            if let trace { return try showPasses(of: trace, in: context.database(access: .read), context: context) }
            if span != nil { throw CommandFailure("--span picks a span of --trace: give the trace too") }
            let model = try RooflineModel.load(from: context.roofline(access: .read))
            let (profile, precision) = try options.resolve(model)
            for (index, other) in model.profiles.enumerated() {
                context.print(
                    "\(other == profile ? "*" : " ") \(index + 1) \(other.name) (\(other.kind), \(Formatting.count(other.points.count, "kernel")))"
                )
            }
            context.print("")
            for problem in profile.unreadable { context.print("⚠ " + UntrustedText.sanitized(problem.description)) }
            context.print("roofs of \(profile.name):")
            for ceiling in profile.ceilings {
                context.print(
                    "  " + ceiling.name.padding(toLength: 16, withPad: " ", startingAt: 0)
                        + RooflineFormat.rate(
                            ceiling.value,
                            unit: ceiling.kind == "memory"
                                ? "B/s" : RooflineFormat.operations(ceiling.precision ?? "FP32")
                        ).leftPadded(to: 13) + "  " + ceiling.provenance)
            }
            context.print("")
            context.print("kernels at \(precision):")
            printKernels(profile, precision: precision, context: context)
        }

        /// Each forward pass the trace recorded (under `span` when given), its operations placed
        /// under their roofs, most time first.
        private func showPasses(of trace: Int64, in database: any SQLDatabase, context: CommandContext) throws {
            let passes: [RooflineFocus]
            do {
                passes = try TraceService(tables: TraceTables(database)).forwardPasses(trace: trace, at: span)
            } catch let error as TraceImportError {
                throw CommandFailure(error.description)
            }
            guard !passes.isEmpty else {
                throw CommandFailure(
                    "trace \(trace)\(span.map { " at span \($0)" } ?? ""): no MiniLM forward pass recorded there "
                        + "(an agent's search records its query's when the corpus has embeddings)")
            }
            for (index, pass) in passes.enumerated() {
                let model = try RooflineBrowser(tables: RooflineTables(database)).model(focus: pass)
                let (profile, precision) = try options.resolve(model)
                if index > 0 { context.print("") }
                context.print(UntrustedText.sanitized(pass.title))
                let total = profile.points.reduce(0) { $0 + $1.seconds }
                context.print(
                    "  \(Formatting.count(profile.points.count, "operation")), "
                        + RooflineFormat.duration(total) + " on \(profile.name)")
                var sorted = profile
                sorted.points.sort { $0.seconds > $1.seconds }
                printKernels(sorted, precision: precision, context: context)
            }
        }

        private func printKernels(_ profile: RooflineModel.Profile, precision: String, context: CommandContext) {
            for p in profile.placements(precision) {
                var line =
                    "  "
                    + TextWidth.truncate(p.point.name, toColumns: 28).padding(toLength: 29, withPad: " ", startingAt: 0)
                    + p.point.shownShape.padding(toLength: 28, withPad: " ", startingAt: 0)
                    + RooflineFormat.duration(p.point.seconds).leftPadded(to: 9)
                guard let rate = p.gflopsPerSecond else {
                    context.print(line + "  no \(precision) FLOPs")
                    continue
                }
                let operations = RooflineFormat.operations(precision)
                line += " " + RooflineFormat.rate(rate, unit: operations).leftPadded(to: 12)
                if let ai = p.flopsPerByte {
                    line += " " + RooflineFormat.intensity(ai).leftPadded(to: 8) + " FLOP/B"
                }
                if let level = p.level, let attainable = p.attainable, let fraction = p.fraction, let bound = p.bound {
                    line +=
                        "  \(level) attainable \(RooflineFormat.rate(attainable, unit: operations)), "
                        + RooflineFormat.percent(fraction) + ", " + bound
                    if RooflineFormat.isAboveRoof(fraction) {
                        line += " (" + RooflineFormat.aboveRoofWarning(bound: bound, level: level) + ")"
                    }
                }
                context.print(line)
                let levels = profile.levelPlacements(p.point, precision: precision)
                if levels.count > 1 {
                    context.print(
                        "    per level: "
                            + levels.map {
                                "\($0.level) \(RooflineFormat.intensity($0.flopsPerByte)) FLOP/B"
                                    + ($0.fraction.map { " (\(RooflineFormat.percent($0)) of its roof)" } ?? "")
                            }.joined(separator: ", "))
                }
            }
        }
    }

    /// `roofline compare SUITE`: every other run of the baseline's kernels, against it.
    struct Compare: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare kernels with a baseline import or run (what b does in the Roofline panel).",
            discussion: """
                SUITE is a kernel import or run as `roofline export` names it (ncu:FILE, kernels, \
                minilm-forward). Every other run of one of its kernels (same name, the same shape where there \
                is one) is listed with its time against the baseline's, the speedup, and GFLOP/s before and after.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The baseline suite, e.g. ncu:before.csv.") var suite: String
        @Option(help: "The precision whose FLOPs give GFLOP/s (FP32 when absent).") var precision = "FP32"

        func run(in context: CommandContext) throws {
            let model = try RooflineModel.load(from: context.roofline(access: .read))
            let suites = Set(model.profiles.flatMap(\.points).map(\.suite))
            guard suites.contains(suite) else {
                throw CommandFailure(
                    "\(UntrustedText.sanitized(suite)): no such kernel suite (these have kernels: "
                        + UntrustedText.sanitized(suites.sorted().joined(separator: ", ")) + ")")
            }
            let precision = precision.uppercased()
            let pairs = model.profiles.flatMap(\.points).compactMap { point in
                model.baseline(for: point, suite: suite).map { (base: $0, point: point) }
            }
            context.print("baseline \(suite): \(Formatting.count(model.kernelCount(suite: suite), "kernel"))")
            guard !pairs.isEmpty else {
                return context.print("no other run of these kernels (same name) in this workspace")
            }
            let operations = RooflineFormat.operations(precision)
            context.print(
                "  kernel                        suite                         base       now   speedup   \(operations) base → now"
            )
            func rate(_ point: RooflineModel.Point) -> String {
                point.gflopsPerSecond(precision).map { RooflineFormat.rate($0, unit: operations) } ?? "—"
            }
            for (base, point) in pairs {
                context.print(
                    "  " + TextWidth.truncate(UntrustedText.sanitized(point.name), toColumns: 28).padded(to: 29)
                        + " " + TextWidth.truncate(UntrustedText.sanitized(point.suite), toColumns: 24).padded(to: 24)
                        + " " + RooflineFormat.duration(base.seconds).leftPadded(to: 9) + " "
                        + RooflineFormat.duration(point.seconds).leftPadded(to: 9)
                        + String(format: " %8.2f×", point.seconds > 0 ? base.seconds / point.seconds : 0)
                        + "   \(rate(base)) → \(rate(point))")
            }
        }
    }

    struct Export: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a profile's ceilings and kernel points as CSV (what `e` does in the Roofline panel).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var options: ProfileOptions
        @Option(
            name: .shortAndLong,
            help: "The file to write; roofline-<profile>-<precision>.csv when absent, - for stdout.")
        var output: String?

        func run(in context: CommandContext) throws {
            let model = try RooflineModel.load(from: context.roofline(access: .read))
            let (profile, precision) = try options.resolve(model)
            let csv = profile.csv(precision)
            if output == "-" {
                context.print(String(csv.dropLast()))
                return
            }
            let path = output ?? profile.exportName(precision)
            do {
                try csv.write(toFile: path, atomically: true, encoding: .utf8)
            } catch {
                throw CommandFailure("\(path): \(error.localizedDescription)")
            }
            context.print(
                "wrote \(path) (\(Formatting.count(profile.ceilings.count, "ceiling")), \(Formatting.count(profile.points.count, "kernel")))"
            )
        }
    }
}

/// `roofline measure` without its output: measures this machine's peaks and bandwidths and stores
/// them as a CPU profile; the profile's id (`bench kernels` on a workspace without one).
package func measureCPUProfile(maxMebibytes: Int, context: CommandContext) throws -> Int64 {
    try RooflineCommand.Measure.characterise(maxMebibytes: maxMebibytes, context: context).1
}
