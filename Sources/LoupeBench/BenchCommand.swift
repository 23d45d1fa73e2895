import ArgumentParser
import Foundation
import Glibc
import LoupeCommands
import LoupeKit
import LoupeProfiling
import LoupeTUI

/// `loupe bench …`: measurements of Loupe itself. Benchmarks are commands, never tests. The
/// executable adds this group to the command tree (``Loupe/register(_:)``): LoupeBench sits above
/// both the command language and the TUI, so `bench tui`, `bench traces` and `bench profiles`
/// drive the panels in-process (``RenderBench``) without a hook in `TUIHost`.
package struct BenchCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Loupe on this machine (start-up, rendering, engines).",
        subcommands: [
            TUI.self, Embed.self, Dense.self, Kernels.self, Retrieval.self, HNSW.self, Traces.self, Evals.self,
            SAE.self, Generate.self, Speculative.self, MCP.self, Glassbox.self,
            Receive.self, Profiles.self, Team.self,
        ]
    )

    package init() {}

    struct TUI: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "tui",
            abstract: "Time to first frame, frame render time at 200×60, and peak memory of the TUI.",
            discussion: """
                First frame: the real loupe binary is started (headless backend, so no terminal is \
                needed) on a fresh workspace, and the time from spawn to its first rendered frame is \
                taken. Render: the shell is rendered in-process at 200×60 across every panel and \
                overlay. Peak RSS is the started process's maximum resident set.
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "How many times to start the binary.") var starts = 7
        @Option(help: "Frames rendered per scene.") var frames = 300

        func run(in context: CommandContext) throws {
            let firstFrames = try measureFirstFrames(context: context)
            let render = RenderBench.timings(size: Size(width: 200, height: 60), frames: max(1, frames))
            let all = render.flatMap(\.milliseconds)
            let result = TUIBenchResult(
                firstFrameMilliseconds: Stats(firstFrames.times),
                renderMilliseconds: Stats(all),
                renderMillisecondsByScene: Dictionary(
                    uniqueKeysWithValues: render.map { ($0.scene, Stats($0.milliseconds)) }),
                renderSize: "200x60",
                framesRendered: all.count,
                peakRSSMegabytes: firstFrames.peakRSSMegabytes,
                targets: ["first_frame_ms": 150, "render_p99_ms": 2, "peak_rss_mb": 60]
            )
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                String(
                    format: "first frame   median %.1f ms  (min %.1f, max %.1f, %d starts)  target ≤ 150 ms",
                    result.firstFrameMilliseconds.median, result.firstFrameMilliseconds.min,
                    result.firstFrameMilliseconds.max, firstFrames.times.count))
            context.print(
                String(
                    format: "render 200×60 median %.3f ms  p99 %.3f ms  (%d frames)  target p99 ≤ 2 ms",
                    result.renderMilliseconds.median, result.renderMilliseconds.p99, all.count))
            for (scene, times) in render {
                let stats = Stats(times)
                context.print(
                    "  " + scene.padding(toLength: 28, withPad: " ", startingAt: 0)
                        + String(format: "median %.3f ms  p99 %.3f ms", stats.median, stats.p99))
            }
            context.print(String(format: "peak RSS      %.1f MB  target ≤ 60 MB", result.peakRSSMegabytes))
        }

        private func measureFirstFrames(context: CommandContext) throws -> (times: [Double], peakRSSMegabytes: Double) {
            guard let executable = CheckoutDirectory.executablePath else {
                throw CommandFailure("cannot find the loupe binary to start")
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "loupe-bench-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            var times: [Double] = []
            var peakKilobytes = 0
            for index in 0..<max(1, starts) {
                context.reporter.report(
                    JobProgress(completed: Double(index), total: Double(starts), detail: "start \(index + 1)"))
                let process = Process()
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = ["--workspace", directory + "/bench.sqlite"]
                var environment = ProcessInfo.processInfo.environment
                environment["LOUPE_BENCH_FIRST_FRAME"] = "200x60"
                process.environment = environment
                let pipe = Pipe()
                process.standardOutput = pipe
                var watch = Stopwatch()
                try process.run()
                let line = pipe.fileHandleForReading.readData(ofLength: 12)
                let elapsed = watch.lap()
                process.waitUntilExit()
                guard String(decoding: line, as: UTF8.self).hasPrefix("first-frame"), process.terminationStatus == 0
                else {
                    throw CommandFailure("the loupe binary did not render a frame (exit \(process.terminationStatus))")
                }
                // The first start creates the workspace; it is timed too but kept apart from
                // the warm starts a user sees every day.
                if index > 0 || starts == 1 { times.append(elapsed * 1000) }
                var usage = rusage()
                getrusage(RUSAGE_CHILDREN.rawValue, &usage)
                peakKilobytes = max(peakKilobytes, usage.ru_maxrss)
            }
            return (times, Double(peakKilobytes) / 1024)
        }
    }
}

/// Median, p99, min and max of a sample.
extension BenchCommand {
    /// What a peer program (`/usr/bin/env ARGUMENTS…`: python3, a venv's Python) prints on
    /// standard output; nil when it cannot start or exits with a failure.
    static func standardOutput(of arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: output, as: UTF8.self)
    }
}

struct Stats: Codable, Hashable {
    var median: Double
    var p99: Double
    var min: Double
    var max: Double

    init(_ values: [Double]) {
        let sorted = values.sorted()
        func quantile(_ q: Double) -> Double {
            guard !sorted.isEmpty else { return .nan }
            return sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count - 1) * q).rounded()))]
        }
        median = quantile(0.5)
        p99 = quantile(0.99)
        min = sorted.first ?? .nan
        max = sorted.last ?? .nan
    }
}

struct TUIBenchResult: Codable, Hashable {
    var firstFrameMilliseconds: Stats
    var renderMilliseconds: Stats
    var renderMillisecondsByScene: [String: Stats]
    var renderSize: String
    var framesRendered: Int
    var peakRSSMegabytes: Double
    var targets: [String: Double]

    enum CodingKeys: String, CodingKey {
        case firstFrameMilliseconds = "first_frame_ms"
        case renderMilliseconds = "render_ms"
        case renderMillisecondsByScene = "render_ms_by_scene"
        case renderSize = "render_size"
        case framesRendered = "frames_rendered"
        case peakRSSMegabytes = "peak_rss_mb"
        case targets
    }
}
