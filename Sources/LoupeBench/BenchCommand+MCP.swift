import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit

extension BenchCommand {
    /// `loupe bench mcp`: tool-call latency of `loupe mcp` through the official MCP Python SDK.
    struct MCP: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "mcp",
            abstract: "MCP tool-call latency p50/p99 and throughput over stdio and HTTP, against the CLI.",
            discussion: """
                A workspace of the sample traces (sample-data/traces: the OTLP GenAI and OpenAI chat \
                exports, and the Inspect log, which is eval run 1) is served by this loupe's `mcp`, and \
                scripts/bench/mcp_peers.py (the official MCP Python SDK, from .venv-peers) calls \
                workspace_info, traces_list, trace_show, trace_search and eval_show --calls times each, one \
                at a time after a warm-up: over stdio (the SDK launches the server) and over streamable \
                HTTP on loopback. The baseline is what an agent without MCP runs: the `loupe` CLI, one \
                process per question (trace list, trace show, eval show --json). Phoenix's MCP server \
                (@arizeai/phoenix-mcp, a Node package) is not installed here, so no peer server is \
                measured. Peak RSS is each server's VmHWM. The issue's goal: p99 ≤ 20 ms for list and show \
                over stdio (a release build).
                """)

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Timed calls per tool and transport.") var calls = 300
        @Option(help: "Timed CLI runs per command.") var cliCalls = 10
        @Option(help: "The Python with the `mcp` SDK.") var python = ".venv-peers/bin/python"

        func run(in context: CommandContext) throws {
            guard let loupe = CheckoutDirectory.executablePath else {
                throw CommandFailure("cannot find the loupe binary to serve")
            }
            guard FileManager.default.isExecutableFile(atPath: python) else {
                throw CommandFailure("\(python) is missing: run scripts/python-peers (from the checkout's root)")
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "loupe-bench-mcp-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let workspace = directory + "/bench.sqlite"
            let samples = ["otlp-genai.jsonl", "openai-chat.jsonl", "inspect-arith.eval"].map {
                "sample-data/traces/" + $0
            }
            for sample in samples where !FileManager.default.fileExists(atPath: sample) {
                throw CommandFailure("\(sample) is missing: run loupe bench mcp from the checkout's root")
            }
            try Self.run(loupe, ["--workspace", workspace, "trace", "import"] + samples)

            // The HTTP server, started first so the Python client can reach both transports.
            let server = Process()
            server.executableURL = URL(fileURLWithPath: loupe)
            server.arguments = ["mcp", "--workspace", workspace, "--http", "127.0.0.1:0"]
            let output = Pipe()
            server.standardOutput = output
            server.standardError = FileHandle.nullDevice
            try server.run()
            defer {
                if server.isRunning {
                    server.terminate()
                    server.waitUntilExit()
                }
            }
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                line.append(chunk)
            }
            let text = String(decoding: line, as: UTF8.self)
            guard let url = text.firstRange(of: /http:\/\/127\.0\.0\.1:[0-9]+\/mcp/).map({ String(text[$0]) }) else {
                throw CommandFailure("loupe mcp --http did not say where it listens: \(text.prefix(200))")
            }
            context.reporter.report(JobProgress(completed: 0, total: 1, detail: "calling tools"))
            guard
                let report = BenchCommand.standardOutput(of: [
                    python, "scripts/bench/mcp_peers.py", loupe, workspace, url, String(max(1, calls)),
                    String(max(1, cliCalls)),
                ])
            else {
                throw CommandFailure("scripts/bench/mcp_peers.py failed: run it alone to see why")
            }
            guard case .object(var result) = try JSONValue.parse(report) else {
                throw CommandFailure("scripts/bench/mcp_peers.py printed no JSON object")
            }
            result["http_server_peak_rss_kb"] =
                Self.peakResidentKilobytes(server.processIdentifier).map {
                    .number(Double($0))
                } ?? .null
            result["peer"] = .string(
                "Phoenix's MCP server (@arizeai/phoenix-mcp) is not installed: the baseline is the loupe CLI, "
                    + "one process per call")
            result["targets"] = .object(["stdio_list_show_p99_ms": .number(20)])
            if json { return context.print(JSONValue.object(result).compactJSON) }
            for transport in ["stdio", "http", "cli"] {
                guard let tools = result[transport]?.object else { continue }
                context.print(transport == "cli" ? "loupe CLI, one process per call:" : "over \(transport):")
                for (name, stats) in tools.sorted(by: { $0.key < $1.key }) {
                    context.print(
                        "  " + name.padding(toLength: 16, withPad: " ", startingAt: 0)
                            + String(
                                format: "p50 %7.2f ms  p99 %7.2f ms  %7.1f calls/s", stats["p50_ms"]?.number ?? .nan,
                                stats["p99_ms"]?.number ?? .nan, stats["calls_per_second"]?.number ?? .nan))
                }
            }
            for key in ["stdio_server_peak_rss_kb", "http_server_peak_rss_kb"] {
                if let kilobytes = result[key]?.number {
                    context.print(String(format: "%@ %.1f MB", key, kilobytes / 1024))
                }
            }
            context.print("peer: Phoenix's MCP server is not installed; the CLI is the baseline")
        }

        /// Runs `loupe ARGUMENTS…` and fails with its error output when it fails.
        static func run(_ loupe: String, _ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: loupe)
            process.arguments = arguments
            let error = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = error
            try process.run()
            let message = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw CommandFailure(
                    "loupe \(arguments.dropFirst(2).joined(separator: " ")) failed: "
                        + String(decoding: message, as: UTF8.self).prefix(400))
            }
        }

        /// A process's peak resident set (VmHWM) in kilobytes, from /proc.
        static func peakResidentKilobytes(_ pid: Int32) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
            for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
                return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
            }
            return nil
        }
    }
}
