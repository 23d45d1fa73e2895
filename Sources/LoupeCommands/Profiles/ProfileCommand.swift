import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore

/// `loupe profile import|list|show|kernels|compare|delete`: PyTorch profiler (Kineto) traces,
/// "where did the time go", as Holistic Trace Analysis answers it.
struct ProfileCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "profile", abstract: "Import PyTorch profiler (Kineto) traces and see where the time went.",
        subcommands: [Import.self, List.self, Show.self, Kernels.self, GEMMs.self, Compare.self, Delete.self])

    /// A rate with the digits it needs: 0.44 for a small file (where "%.0f" printed 0), 76 for a large one.
    static func rate(_ megabytesPerSecond: Double) -> String {
        String(format: megabytesPerSecond < 10 ? "%.2f" : "%.0f", megabytesPerSecond)
    }

    struct Import: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import Kineto trace files (.json, .json.gz; a directory: one file per rank) as one profile.",
            discussion: """
                The files are read as they stream in (gigabytes are fine), each one a rank (its \
                distributedInfo.rank, else its place in the list), and stored in one transaction: a bad file \
                names the file and the event, and nothing is imported. Importing the same files again \
                changes nothing.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Trace files, or directories of them.") var files: [String]
        @Option(help: "The profile's name (the first file's, by default).") var name: String?

        func run(in context: CommandContext) throws {
            guard !files.isEmpty else { throw CommandFailure("name at least one trace file or directory") }
            let started = Date()
            let report: ProfileService.ImportReport
            do {
                let service = ProfileService(database: try context.database())
                report = try Interrupt.importing(context, "profiles") {
                    try service.importFiles(files, name: name, reporter: context.reporter)
                }
            } catch let error as ProfileReadError {
                throw CommandFailure("\(UntrustedText.sanitized(error.description)); nothing was imported")
            } catch let error as FileReadError {
                throw CommandFailure("\(UntrustedText.sanitized(error.description)); nothing was imported")
            }
            let seconds = Date().timeIntervalSince(started)
            if report.unchanged {
                return context.print("profile \(report.id) (\(UntrustedText.sanitized(report.name))): unchanged")
            }
            context.print(
                "profile \(report.id) (\(UntrustedText.sanitized(report.name))): "
                    + "\(Formatting.count(report.ranks, "rank")), \(Formatting.count(report.events, "event")) "
                    + String(format: "from %@ in %.2f s", Formatting.bytes(Int64(report.bytes)), seconds)
                    + " (\(ProfileCommand.rate(Double(report.bytes) / 1e6 / max(seconds, 1e-9))) MB/s)")
            for file in report.files {
                let passed = file.passedOver.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
                context.print(
                    "  \(UntrustedText.sanitized((file.path as NSString).lastPathComponent)): "
                        + "\(Formatting.count(file.events, "event"))"
                        + (file.rank.map { " · rank \($0)" + (file.worldSize.map { " of \($0)" } ?? "") } ?? "")
                        + (passed.isEmpty
                            ? "" : " · passed over: " + UntrustedText.sanitized(passed.joined(separator: ", "))))
            }
            if let window = report.window { context.print(window.description) }
        }
    }

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Every imported profile.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let listing = try ProfilesBrowser(database: context.database(access: .read)).list()
            let profiles = listing.records
            if json {
                struct Entry: Encodable {
                    var id: Int64
                    var name: String
                    var ranks: Int
                    var events: Int
                    /// The default window, once analysed (`profile show`, or opened in the TUI).
                    var window: AnalysisWindow?
                }
                return context.print(
                    try Formatting.json(
                        profiles.map {
                            Entry(
                                id: $0.id ?? 0, name: $0.name, ranks: $0.ranks, events: $0.events,
                                window: $0.id.flatMap { listing.windows[$0] })
                        }))
            }
            guard !profiles.isEmpty else {
                return context.print("no profiles: import one with `loupe profile import FILE…`")
            }
            context.print("   id  ranks     events   window ms  name")
            for p in profiles {
                let span = p.id.flatMap { listing.windows[$0] }.map { String(format: "%10.3f", Double($0.span) / 1e6) }
                context.print(
                    String(format: "%5lld  %5d  %9d  ", p.id ?? 0, p.ranks, p.events)
                        + (span ?? "         —") + "  " + UntrustedText.sanitized(p.name))
            }
            context.print(
                "window ms: the GPU span of HTA's default window (the last ProfilerStep left out), "
                    + "the span `profile show` states (worked out at import)")
        }
    }

    /// The profile and its report, from the shared options.
    static func load(_ reference: String, in context: CommandContext) throws -> ProfileService.Loaded {
        let service = ProfileService(database: try context.database(access: .read))
        do {
            return try service.load(try service.resolve(reference))
        } catch let error as ProfileReadError {
            throw CommandFailure(UntrustedText.sanitized(error.description))
        }
    }

    /// The profile's report, of one rank when `rank` is given.
    ///
    /// The default window with at most ``ProfileReport/keptTop`` kernels is the report the
    /// workspace keeps (the Profiles panel's): read back in a millisecond once made, instead of
    /// analysing every event again (seconds for a gigabyte trace).
    static func report(
        _ profile: String, rank: Int?, allSteps: Bool, top: Int, in context: CommandContext
    ) throws -> ProfileReport {
        var report: ProfileReport
        if !allSteps, top <= ProfileReport.keptTop {
            let service = ProfileService(database: try context.database())
            do {
                report = try service.report(try service.resolve(profile))
            } catch let error as ProfileReadError {
                throw CommandFailure(UntrustedText.sanitized(error.description))
            }
            for index in report.ranks.indices {
                report.ranks[index].kernels = Array(report.ranks[index].kernels.prefix(top))
                report.ranks[index].operators = Array(report.ranks[index].operators.prefix(top))
            }
        } else {
            report = ProfileReport.make(try load(profile, in: context), allSteps: allSteps, top: top)
        }
        if let rank {
            report.ranks = report.ranks.filter { $0.rank == rank }
            guard !report.ranks.isEmpty else { throw CommandFailure("--rank \(rank): the profile has no such rank") }
        }
        return report
    }

    struct Show: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Where a profile's time went: compute, communication and idle per rank, kernel types and families, top kernels, idle by stream, launch delays.",
            discussion: """
                Figures are defined as Holistic Trace Analysis defines them (temporal breakdown, kernel-type \
                overlap, idle-time breakdown, communication/computation overlap, CUDA launch delay), in \
                nanoseconds. Like HTA, the last ProfilerStep is left out when there are two or more (it is \
                often cut short); --all-steps keeps it.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The profile's id or a part of its name.") var profile: String
        @Option(help: "Show only this rank.") var rank: Int?
        @Option(help: "How many kernels to list.") var top = 10
        @Flag(help: "Keep the last ProfilerStep.") var allSteps = false
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let report = try ProfileCommand.report(profile, rank: rank, allSteps: allSteps, top: top, in: context)
            if json { return context.print(try Formatting.json(report)) }
            for line in ProfileText.report(report) { context.print(line) }
        }
    }

    struct Kernels: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "A profile's kernels by total time: count, total, mean, p50, p99, family.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The profile's id or a part of its name.") var profile: String
        @Option(help: "Only this rank.") var rank: Int?
        @Option(help: "How many kernels to list.") var top = 30
        @Flag(help: "Keep the last ProfilerStep.") var allSteps = false
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let report = try ProfileCommand.report(profile, rank: rank, allSteps: allSteps, top: top, in: context)
            let ranks = report.ranks
            if json {
                struct RankKernels: Encodable {
                    var rank: Int
                    var kernels: [ProfileReport.Kernel]
                }
                return context.print(try Formatting.json(ranks.map { RankKernels(rank: $0.rank, kernels: $0.kernels) }))
            }
            context.print(ProfileText.window(report.window))
            for r in ranks {
                context.print(
                    "rank \(r.rank)"
                        + (r.cpuOnly
                            ? " · operators on the host (no GPU events); % of the ProfilerSteps' time"
                            : " · % of summed kernel time \(ProfileText.ms(r.kernelNs)) (overlapping kernels each count)")
                )
                for line in ProfileText.kernels(r.cpuOnly ? r.operators : r.kernels) { context.print(line) }
            }
        }
    }

    struct GEMMs: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "gemms",
            abstract: "A profile's matrix multiplies by shape: FLOPs, attained GFLOP/s and how far from the roof.",
            discussion: """
                Shapes come from the operators' recorded input shapes (torch.profiler with \
                record_shapes=True): aten::mm, addmm, bmm and baddbmm, 2·batch·M·N·K FLOPs each. On a GPU \
                trace each is timed by the kernels it launched (its External id); on a CPU trace by the \
                operator itself. The roof is the GPU's datasheet peak for the precision (the device the \
                trace names), or for a CPU trace this workspace's measured FP32 peak (`loupe roofline \
                measure`; the trace's machine may differ).
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The profile's id or a part of its name.") var profile: String
        @Option(help: "How many shapes to list.") var top = 20
        @Flag(help: "Print JSON.") var json = false

        struct Output: Encodable {
            var gemms: ProfileGEMMs
            var roofName: String?
            var roofGFLOPS: Double?
        }

        func run(in context: CommandContext) throws {
            let database = try context.database(access: .read)
            let service = ProfileService(database: database)
            let gemms: ProfileGEMMs
            do {
                gemms = try service.gemms(try service.resolve(profile))
            } catch let error as ProfileReadError {
                throw CommandFailure(UntrustedText.sanitized(error.description))
            }
            let roof = try Self.roof(gemms, roofline: RooflineTables(database))
            if json {
                return context.print(
                    try Formatting.json(Output(gemms: gemms, roofName: roof?.name, roofGFLOPS: roof?.gflops)))
            }
            for line in ProfileText.gemms(gemms, roof: roof, top: top) { context.print(line) }
        }

        /// The roof the multiplies are held against: the GPU's datasheet peak for their
        /// precision, or this machine's measured FP32 peak for a CPU trace.
        static func roof(_ gemms: ProfileGEMMs, roofline: RooflineTables) throws -> (name: String, gflops: Double)? {
            if gemms.device == "CPU" {
                return try KernelsCommand.cpuRoofs(roofline).map {
                    ("this machine's measured FP32 peak", $0.roofs.peak)
                }
            }
            guard let sheet = gemms.deviceName.flatMap(GPUDatasheet.matching) else { return nil }
            let precision = gemms.rows.first?.shape.precision ?? "FP32"
            // FP16 and BF16 multiplies run on the tensor cores, at the same peak.
            let wanted = precision == "FP16" ? "BF16" : precision
            guard
                let entry = sheet.compute.first(where: {
                    $0.precision == wanted && ($0.name.contains("tensor") || wanted == "FP32")
                })
            else { return nil }
            return ("\(sheet.name) \(entry.name) (datasheet)", entry.gflops)
        }
    }

    struct Compare: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Two profiles' kernels side by side (before → after): time deltas, new and removed kernels.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The profile before.") var before: String
        @Argument(help: "The profile after.") var after: String
        @Option(help: "How many kernels to list.") var top = 20
        @Flag(help: "Keep each profile's last ProfilerStep.") var allSteps = false
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let comparison = ProfileComparison.make(
                try ProfileCommand.load(before, in: context), try ProfileCommand.load(after, in: context),
                allSteps: allSteps)
            if json { return context.print(try Formatting.json(comparison)) }
            for line in ProfileText.comparison(comparison, top: top) { context.print(line) }
        }
    }

    struct Delete: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a profile and its events.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The profile's id.") var id: Int64

        func run(in context: CommandContext) throws {
            guard try ProfilerTables(context.database()).deleteProfilerTrace(id: id) else {
                throw CommandFailure("no profile \(id) (`loupe profile list` shows them)")
            }
            context.print("deleted profile \(id)")
        }
    }
}
