import ArgumentParser
import Foundation
import Glibc
import LoupeAgents
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeProfiling
import LoupeStore
import LoupeTUI

extension BenchCommand {
    struct Traces: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "traces",
            abstract: "Trace import throughput, and opening and stepping a 50,000-span trace.",
            discussion: """
                Import: a generated OTLP JSON Lines file (GenAI agent runs: an agent span, model calls \
                whose input is the conversation so far, tool calls; one export request per line, as file \
                exporters write) is imported into a fresh workspace by `loupe trace import` in a child process \
                (the time and peak RSS are that process's), then its phases are timed alone, one after the other; the same file is read by Python's json.loads, \
                line by line, in the same run. Replay: one 50,000-span trace is imported, then \
                the Traces panel opens it (spans read, first step's payload read, first frame rendered) and \
                steps through 500 steps, each reading its payload and rendering; the last peak RSS is this \
                process's.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Size of the generated import file, in MB.") var megabytes = 100
        @Option(help: "Spans in the replay trace.") var spans = 50_000
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Keep the generated file and workspaces in this directory (for inspecting them).")
        var keep: String?

        struct Result: Encodable {
            var fileBytes: Int
            var traces: Int
            var spansImported: Int
            var parseSeconds: Double
            var recordSeconds: Double
            var storeSeconds: Double
            var importSeconds: Double
            var importMegabytesPerSecond: Double
            /// `loupe trace import`'s own peak RSS, and its ratio to the file's size.
            var importPeakRSSMegabytes: Double
            var importPeakRSSOverFile: Double
            var pythonJSONLoadsSeconds: Double?
            var pythonJSONLoadsMegabytesPerSecond: Double?
            var replaySpans: Int
            var replayImportSeconds: Double
            var openFirstFrameMilliseconds: Double
            var stepMilliseconds: Stats
            var shortStepMilliseconds: Stats
            var peakRSSMegabytes: Double
        }

        func run(in context: CommandContext) throws {
            let directory =
                keep
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("loupe-bench-traces-\(UUID())").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { if keep == nil { try? FileManager.default.removeItem(atPath: directory) } }

            // 1. Import throughput.
            let file = directory + "/runs.jsonl"
            let (bytes, count) = try Self.writeRuns(to: file, megabytes: megabytes)
            // The import as a user runs it: `loupe trace import` in its own process, its WAL
            // checkpoint and exit included, its peak RSS its own.
            let (importSeconds, importRSS) = try Self.importInChildProcess(
                file, workspace: directory + "/import.sqlite")
            let imported = try TraceService(workspace: try Workspace(path: directory + "/import.sqlite")).list()
            let report = (traces: imported.count, spans: imported.reduce(0) { $0 + $1.spanCount })
            var clock = Stopwatch()
            // Then the phases on their own, one after the other, into a scratch workspace: the
            // file read a block of lines at a time into traces and stored spans, the traces'
            // rows made on one core, the rows into SQLite.
            let (parseSeconds, recordSeconds, storeSeconds) = try {
                var clock = Stopwatch()
                let read = try TraceService.otlpLines(file) ?? []
                let parseSeconds = clock.lap()
                let records = read.map { TraceService.record($0.trace, sourceFile: file, encoded: $0.encoded) }
                let recordSeconds = clock.lap()
                _ = try Workspace(path: directory + "/phases.sqlite").traces.importTraces(records)
                precondition(report.traces == read.count, "import and read disagree")
                return (parseSeconds, recordSeconds, clock.lap())
            }()
            let python = Self.pythonJSONLoads(file)

            // 2. Replay a long trace.
            let long = directory + "/long.json"
            try Data(TraceExport.export(Self.longTrace(spans: spans), as: .otlp).compactJSON.utf8).write(
                to: URL(fileURLWithPath: long))
            let replay = TraceService(workspace: try Workspace(path: directory + "/replay.sqlite"))
            clock = Stopwatch()
            let id = try replay.importFiles([long]).counts.ids[0]
            let replayImportSeconds = clock.lap()
            let (open, steps) = try RenderBench.replay(
                trace: id, browser: TracesBrowser(tables: replay.tables), steps: 500)
            // And a short one (an agent span, 5 steps), stepped through 100 times.
            let short = directory + "/short.json"
            try Data(TraceExport.export(Self.longTrace(spans: 6), as: .otlp).compactJSON.utf8).write(
                to: URL(fileURLWithPath: short))
            let shortID = try replay.importFiles([short]).counts.ids[0]
            let (_, shortSteps) = try RenderBench.replay(
                trace: shortID, browser: TracesBrowser(tables: replay.tables), steps: 500)

            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            let megabytesRead = Double(bytes) / 1e6
            let result = Result(
                fileBytes: bytes, traces: count, spansImported: report.spans, parseSeconds: parseSeconds,
                recordSeconds: recordSeconds, storeSeconds: storeSeconds,
                importSeconds: importSeconds, importMegabytesPerSecond: megabytesRead / importSeconds,
                importPeakRSSMegabytes: importRSS / 1e6, importPeakRSSOverFile: importRSS / Double(bytes),
                pythonJSONLoadsSeconds: python, pythonJSONLoadsMegabytesPerSecond: python.map { megabytesRead / $0 },
                replaySpans: spans, replayImportSeconds: replayImportSeconds, openFirstFrameMilliseconds: open,
                stepMilliseconds: Stats(steps), shortStepMilliseconds: Stats(shortSteps),
                peakRSSMegabytes: Double(usage.ru_maxrss) / 1024)
            if json { return context.print(try Formatting.json(result)) }
            context.print(
                String(
                    format:
                        "loupe trace import of %.1f MB (%d traces, %d spans): %.2f s = %.1f MB/s (target ≥ 60), "
                        + "peak RSS %.0f MB = %.2fx the file (target ≤ 2); "
                        + "alone: read %.2f s, to rows %.2f s, SQLite %.2f s",
                    megabytesRead, count, report.spans, importSeconds, result.importMegabytesPerSecond,
                    result.importPeakRSSMegabytes, result.importPeakRSSOverFile, parseSeconds, recordSeconds,
                    storeSeconds))
            if let python, let rate = result.pythonJSONLoadsMegabytesPerSecond {
                context.print(
                    String(
                        format: "python json.loads over the same lines: %.2f s = %.1f MB/s; loupe import ÷ it %.2fx",
                        python, rate, result.importMegabytesPerSecond / rate))
            }
            context.print(
                String(
                    format: "%d-span trace: import %.2f s; open to first frame %.1f ms (target ≤ 200); "
                        + "step median %.2f ms, p99 %.2f ms (target ≤ 5)", spans, replayImportSeconds, open,
                    result.stepMilliseconds.median, result.stepMilliseconds.p99))
            context.print(
                String(
                    format: "6-span trace: step median %.2f ms, p99 %.2f ms (target ≤ 5)",
                    result.shortStepMilliseconds.median, result.shortStepMilliseconds.p99))
            context.print(String(format: "peak RSS of this process (replay) %.0f MB", result.peakRSSMegabytes))
        }

        /// Agent runs as a GenAI-instrumented agent would export them, until `megabytes` are written.
        static func writeRuns(to path: String, megabytes: Int) throws -> (bytes: Int, traces: Int) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            var bytes = 0
            var count = 0
            var random = SystemRandomNumberGenerator()
            while bytes < megabytes * 1_000_000 {
                let trace = agentRun(index: count, turns: 4 + count % 9, random: &random)
                let line = TraceExport.export(trace, as: .otlp).compactJSON + "\n"
                let data = Data(line.utf8)
                handle.write(data)
                bytes += data.count
                count += 1
            }
            return (bytes, count)
        }

        private static let words = """
            the boundary layer transition on a flat plate depends on the pressure gradient surface heat \
            transfer roughness and the free stream turbulence level measured in the wind tunnel at mach
            """.split(separator: " ").map(String.init)

        private static func sentence(_ length: Int, _ random: inout some RandomNumberGenerator) -> String {
            (0..<length).map { _ in words.randomElement(using: &random)! }.joined(separator: " ")
        }

        /// One agent run: a root agent span, then per turn a model call (its input the whole
        /// conversation so far) and a tool call; every tenth tool fails.
        static func agentRun(index: Int, turns: Int, random: inout some RandomNumberGenerator) -> Trace {
            let t0 = Int64(1_767_225_600_000_000_000) + Int64(index) * 60_000_000_000
            var clock = t0
            var conversation = [
                Message(role: "system", text: sentence(40, &random)),
                Message(role: "user", text: sentence(25, &random)),
            ]
            var spans = [
                TraceSpan(
                    spanID: "root", parentID: nil, kind: .agent, name: "invoke_agent bench", startNs: t0, endNs: nil)
            ]
            for turn in 0..<turns {
                var llm = TraceSpan(
                    spanID: "llm\(turn)", parentID: "root", kind: .llm, name: "chat gpt-4o-mini", startNs: clock,
                    endNs: clock + 900_000_000)
                llm.model = "gpt-4o-mini"
                llm.input = conversation
                let call = ToolCall(
                    id: "call_\(index)_\(turn)", name: "search", arguments: "{\"query\":\"\(sentence(6, &random))\"}")
                var answer = Message(role: "assistant", text: sentence(30, &random))
                answer.toolCalls = [call]
                llm.output = [answer]
                llm.usage = Usage(inputTokens: 300 + 120 * turn, outputTokens: 40)
                spans.append(llm)
                clock += 950_000_000
                var tool = TraceSpan(
                    spanID: "tool\(turn)", parentID: "root", kind: .tool, name: "execute_tool search", startNs: clock,
                    endNs: clock + 80_000_000)
                var executed = call
                executed.result = sentence(120, &random)
                if (index + turn) % 10 == 0 {
                    executed.error = "timeout"
                    tool.status = .error("timeout")
                }
                tool.tool = executed
                spans.append(tool)
                clock += 100_000_000
                conversation += [answer, Message(role: "tool", text: executed.result ?? "", toolCallID: call.id)]
            }
            spans[0].endNs = clock
            return Trace(
                externalID: String(format: "%032x", index + 1), format: .otlp, name: "bench run \(index)", spans: spans)
        }

        /// One trace of `spans` spans: model and tool calls in turn, each model call's input the
        /// last few messages (a long agent run that trims its context).
        static func longTrace(spans count: Int) -> Trace {
            var random = SystemRandomNumberGenerator()
            let t0 = Int64(1_767_225_600_000_000_000)
            var spans = [
                TraceSpan(spanID: "root", parentID: nil, kind: .agent, name: "long agent run", startNs: t0, endNs: nil)
            ]
            var clock = t0
            var recent: [Message] = [Message(role: "user", text: sentence(20, &random))]
            for i in 0..<(count - 1) {
                if i % 2 == 0 {
                    var llm = TraceSpan(
                        spanID: "s\(i)", parentID: "root", kind: .llm, name: "chat", startNs: clock,
                        endNs: clock + 500_000_000)
                    llm.input = Array(recent.suffix(6))
                    let answer = Message(
                        role: "assistant", text: sentence(15, &random),
                        toolCalls: [ToolCall(id: "c\(i)", name: "read", arguments: "{\"chunk\":\(i)}")])
                    llm.output = [answer]
                    llm.usage = Usage(inputTokens: 900, outputTokens: 30)
                    recent.append(answer)
                    spans.append(llm)
                } else {
                    var tool = TraceSpan(
                        spanID: "s\(i)", parentID: "root", kind: .tool, name: "read", startNs: clock,
                        endNs: clock + 20_000_000)
                    tool.tool = ToolCall(
                        id: "c\(i - 1)", name: "read", arguments: "{\"chunk\":\(i - 1)}", result: sentence(40, &random))
                    recent.append(Message(role: "tool", text: tool.tool?.result ?? "", toolCallID: "c\(i - 1)"))
                    spans.append(tool)
                }
                clock += 520_000_000
            }
            spans[0].endNs = clock
            return Trace(
                externalID: String(format: "%032x", 0xABCD), format: .otlp, name: "long agent run", spans: spans)
        }

        /// Wall seconds and peak RSS in bytes of `loupe trace import FILE` into `workspace`, run
        /// as a child process of this binary.
        static func importInChildProcess(
            _ file: String, workspace: String, command: [String] = ["trace", "import"]
        ) throws -> (seconds: Double, rss: Double) {
            guard let executable = CheckoutDirectory.executablePath else { throw NoExecutableError() }
            // Not through Foundation's Process: its waitUntilExit polls every 50 ms on Linux
            // (rounding each import up to the next poll) and its termination handler came a
            // quarter of a second late. ChildProcess returns as the child is reaped, with the
            // child's own peak RSS.
            var clock = Stopwatch()
            let exit = ChildProcess.run([executable, "--workspace", workspace] + command + [file], silenceOutput: true)
            let seconds = clock.lap()
            guard let exit else { throw ImportFailedError(status: -1) }
            guard exit.status == 0 else { throw ImportFailedError(status: exit.status) }
            return (seconds, exit.peakResidentBytes)
        }

        struct NoExecutableError: UserFacingError {
            var description: String { "bench traces: cannot find this loupe binary to run `loupe trace import`" }
        }

        struct ImportFailedError: UserFacingError {
            var status: Int32
            var description: String { "bench traces: `loupe trace import` of the generated file exited with \(status)" }
        }

        /// Seconds for Python's json.loads over every line of `file`, or nil without python3.
        static func pythonJSONLoads(_ file: String) -> Double? {
            let output = BenchCommand.standardOutput(of: [
                "python3", "-c",
                "import json,sys,time\nt=time.perf_counter()\nfor line in open(sys.argv[1],'rb'): json.loads(line)\nprint(time.perf_counter()-t)",
                file,
            ])
            return output.flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }
}
