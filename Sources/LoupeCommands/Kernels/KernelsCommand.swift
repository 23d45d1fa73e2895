import ArgumentParser
import Foundation
import LoupeKit
import LoupeProfiling
import LoupeStore

/// `loupe kernels …`: the engine's kernels, measured and placed under this machine's roofs.
package struct KernelsCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "kernels",
        abstract: "List and benchmark the engine's kernels (matmul, softmax, layernorm, GELU, attention, int8).",
        subcommands: [List.self, Bench.self]
    )

    package init() {}

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "The kernels, their shape format and default shapes.")
        @OptionGroup var global: GlobalOptions

        func run(in context: CommandContext) throws {
            for spec in KernelBench.all {
                let shapes = spec.defaultShapes.map { $0.map(String.init).joined(separator: "x") }.joined(
                    separator: ", ")
                context.print(
                    spec.name.padding(toLength: 20, withPad: " ", startingAt: 0)
                        + spec.shapeFormat.padding(toLength: 14, withPad: " ", startingAt: 0)
                        + shapes.padding(toLength: 33, withPad: " ", startingAt: 0) + spec.summary)
            }
        }
    }

    struct Bench: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Time kernels on this machine and store them in the workspace (suite kernels).",
            discussion: """
                Each kernel runs once to warm up, then repeats for --seconds (at least twice), and \
                its best time is kept. FLOPs and bytes are analytic, from the shape (see `loupe \
                kernels list`). With a machine profile in the workspace (`loupe roofline measure`), \
                each kernel is judged against the memory level its working set fits in: attainable \
                = min(peak, bandwidth × FLOP/byte).
                """
        )

        @OptionGroup var global: GlobalOptions
        @Option(name: .customLong("kernel"), help: "A kernel to run (repeatable); all when absent.")
        var kernels: [String] = []
        @Option(help: "The shape, e.g. 512x512x512 or 2048x64 (see `kernels list`); the defaults when absent.")
        var shape: String?
        @Option(help: "Threads (default: every core).") var threads: Int?
        @Option(help: "Seconds of repeats per kernel and shape.") var seconds = 0.5
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let specs = try KernelsCommand.specs(kernels)
            let parsedShape = try shape.map(KernelsCommand.parseShape)
            if let parsedShape, let wrong = specs.first(where: { !$0.accepts(parsedShape) }) {
                throw CommandFailure("--shape \(shape!): \(wrong.name) takes \(wrong.shapeFormat)")
            }
            let threads = max(1, threads ?? ProcessInfo.processInfo.activeProcessorCount)
            let roofs = try KernelsCommand.cpuRoofs(context.roofline())
            let jobs = specs.flatMap { spec in (parsedShape.map { [$0] } ?? spec.defaultShapes).map { (spec, $0) } }
            var measurements: [KernelBench.Measurement] = []
            for (index, (spec, shape)) in jobs.enumerated() {
                try context.reporter.checkCancellation()
                context.reporter.report(
                    JobProgress(completed: Double(index), total: Double(jobs.count), detail: spec.name))
                measurements.append(KernelBench.measure(spec, shape: shape, threads: threads, seconds: seconds))
            }
            try KernelsCommand.store(measurements, profileID: roofs?.id, in: context.roofline())
            if json {
                context.print(try Formatting.json(measurements.map { KernelsCommand.Row($0, roofs: roofs?.roofs) }))
                return
            }
            KernelsCommand.printTable(measurements, roofs: roofs?.roofs, context: context)
            context.print("stored in \(context.session.displayPath) (kernel_runs, suite kernels)")
        }
    }

    /// The specs named, or all.
    static func specs(_ names: [String]) throws -> [KernelBench.Spec] {
        guard !names.isEmpty else { return KernelBench.all }
        return try names.map { name in
            guard let spec = KernelBench.spec(named: name) else {
                throw CommandFailure(
                    "no kernel named '\(name)'; the kernels are \(KernelBench.all.map(\.name).joined(separator: ", "))")
            }
            return spec
        }
    }

    static func parseShape(_ text: String) throws -> [Int] {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        let numbers = parts.map { Int($0.filter { $0 != "_" && $0 != "," }) }
        guard !parts.isEmpty, numbers.allSatisfy({ ($0 ?? 0) > 0 }) else {
            throw CommandFailure("--shape '\(text)' is not positive integers joined by x (e.g. 1024x1024x1024)")
        }
        return numbers.map { $0! }
    }

    /// The latest CPU profile's all-core FP32 peak and its memory levels (from the stored sweep).
    package static func cpuRoofs(_ workspace: RooflineTables) throws -> (id: Int64, roofs: Roofs)? {
        guard let (profile, ceilings) = try workspace.latestMachineProfile(), let id = profile.id else { return nil }
        func allCores(_ precision: String) -> Double? {
            ceilings.first {
                $0.kind == "compute" && ($0.precision ?? "FP32") == precision && !$0.name.contains("1 core")
            }?.value
        }
        guard let peak = allCores("FP32") else { return nil }
        let sweep = try BandwidthSample.sweep(fromJSON: profile.sweepJSON)
        return (id, Roofs(peak: peak, int8Peak: allCores("INT8"), levels: PlateauDetector.plateaus(sweep)))
    }

    /// The int8 roof, as `roofline measure` stores it: GOP/s of the multiply-add loop on
    /// `cores` cores.
    package static func int8Ceiling(_ value: Double, cores: Int, measuredBy method: String) -> CeilingRecord {
        CeilingRecord(
            kind: "compute", name: cores == 1 ? "INT8 (1 core)" : "INT8 (\(cores) cores)", value: value,
            provenance: "\(MachineProbe.int8PeakMethod), \(method)", precision: "INT8")
    }

    package static func store(
        _ measurements: [KernelBench.Measurement], profileID: Int64?, in workspace: RooflineTables
    )
        throws
    {
        let now = Date()
        let machine = KernelRun.thisMachine
        try workspace.record(
            measurements.map { m in
                // The time is wall-clock over all threads, so the rate is the whole machine's:
                // threads 1 in the record, the thread count in the workload.
                KernelRun(
                    suite: "kernels", kernel: m.kernel, workload: "\(m.shape), \(m.threads) threads", calls: m.repeats,
                    nanoseconds: Int64((m.seconds * 1e9).rounded()), flops: m.flops, bytes: m.bytes, threads: 1,
                    machine: machine, measuredAt: now, profileID: profileID,
                    flopsByPrecision: m.precision == "FP32" ? nil : [m.precision: m.flops],
                    scratchBytes: m.scratchBytes, footprintBytes: m.footprintBytes)
            })
    }

    /// A measurement with its place under the roofs.
    package struct Row: Encodable {
        var kernel: String
        var shape: String
        var threads: Int
        var seconds: Double
        var gflopsPerSecond: Double
        var gigabytesPerSecond: Double
        var flopsPerByte: Double
        /// The roof its operations are judged against (GFLOP/s are GOP/s for INT8).
        var precision: String
        var scratchBytes: Int
        var workingSetBytes: Int
        var level: String?
        var attainableGflopsPerSecond: Double?
        var fractionOfAttainable: Double?
        var bound: String?

        package init(_ m: KernelBench.Measurement, roofs: Roofs?) {
            kernel = m.kernel
            shape = m.shape
            threads = m.threads
            seconds = m.seconds
            gflopsPerSecond = m.gflopsPerSecond
            gigabytesPerSecond = m.gigabytesPerSecond
            flopsPerByte = m.flopsPerByte
            precision = m.precision
            scratchBytes = m.scratchBytes
            workingSetBytes = m.workingSetBytes
            if let roofs, let level = roofs.level(forWorkingSet: m.footprintBytes),
                let attainable = roofs.attainable(flopsPerByte: m.flopsPerByte, at: level, precision: m.precision)
            {
                self.level = level.level
                attainableGflopsPerSecond = attainable
                fractionOfAttainable = m.gflopsPerSecond / attainable
                bound = roofs.bound(flopsPerByte: m.flopsPerByte, at: level, precision: m.precision)
            }
        }
    }

    package static func printTable(_ measurements: [KernelBench.Measurement], roofs: Roofs?, context: CommandContext) {
        context.print(
            "kernel              shape              ms      GFLOP/s    GB/s  FLOP/B  level  attainable  % att.  bound")
        for m in measurements {
            let row = Row(m, roofs: roofs)
            var line =
                m.kernel.padding(toLength: 20, withPad: " ", startingAt: 0)
                + m.shape.padding(toLength: 15, withPad: " ", startingAt: 0)
                + String(
                    format: "%9.2f %10.1f %7.1f %7.2f", m.seconds * 1000, m.gflopsPerSecond, m.gigabytesPerSecond,
                    m.flopsPerByte)
            if let level = row.level, let attainable = row.attainableGflopsPerSecond,
                let fraction = row.fractionOfAttainable, let bound = row.bound
            {
                line += "  " + level.padding(toLength: 5, withPad: " ", startingAt: 0)
                line += String(format: "%11.1f %6.0f%%  ", attainable, fraction * 100) + bound
                // GOP/s against the int8 roof.
                if m.precision != "FP32" { line += " (\(m.precision) roof)" }
            }
            context.print(line)
        }
        if roofs == nil {
            context.print(
                "no machine profile in this workspace: run `loupe roofline measure` to judge these against the roofs")
        }
    }
}
