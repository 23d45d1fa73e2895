import Foundation
import LoupeAgents
import LoupeKit
import LoupeStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `loupe serve` receiving what the real OpenTelemetry Python SDK and instrumentations
/// export over the network (the Python peers from PyPI, `scripts/python-peers`).
@Suite(.serialized) struct OTLPPeerTests {
    /// A `loupe serve` process on free loopback ports.
    final class Server {
        let process = Process()
        let output = Pipe()
        let directory = TestEnvironment.temporaryDirectory()
        var http = ""
        var grpc = ""
        var workspacePath: String { directory + "/w.sqlite" }

        init(_ extra: [String] = []) throws {
            process.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
            process.arguments =
                ["serve", "--workspace", workspacePath, "--http-port", "0", "--grpc-port", "0"] + extra
            process.standardOutput = output
            process.standardError = output
            try process.run()
            // The first line says where it listens.
            var line = Data()
            let deadline = Date().addingTimeInterval(30)
            while !line.contains(0x0A) && Date() < deadline {
                let byte = output.fileHandleForReading.readData(ofLength: 1)
                if byte.isEmpty { break }
                line.append(byte)
            }
            let text = String(decoding: line, as: UTF8.self)
            let http = text.firstRange(of: /http:\/\/[0-9.]+:[0-9]+/).map { String(text[$0]) }
            let grpc = text.firstRange(of: /OTLP\/gRPC [0-9.]+:[0-9]+/).map { String(text[$0].dropFirst(10)) }
            guard text.hasPrefix("listening: "), http != nil || grpc != nil else {
                process.terminate()
                throw CommandTestFailure("loupe serve did not say where it listens: \(text)")
            }
            self.http = http ?? ""
            self.grpc = grpc ?? ""
        }

        /// SIGTERM, then everything it printed after the first line.
        func stop() -> (status: Int32, output: String) {
            kill(process.processIdentifier, SIGTERM)
            let rest = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: rest, as: UTF8.self))
        }
    }

    struct CommandTestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static var python: String { TestEnvironment.repositoryRoot.appendingPathComponent(".venv-peers/bin/python").path }

    /// Runs a script of scripts/fixtures with the peers' Python.
    static func peer(_ script: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (
        status: Int32, output: String
    ) {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw CommandTestFailure("the Python peers are missing: run scripts/python-peers first")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [TestEnvironment.repositoryRoot.appendingPathComponent("scripts/fixtures/" + script).path]
            + arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self))
    }

    /// A trace without what differs by transport: the source as written (the file exporter's
    /// JSON against the protobuf turned into JSON).
    static func content(_ trace: Trace) -> Trace {
        var trace = trace
        for i in trace.spans.indices { trace.spans[i].raw = nil }
        return trace
    }

    @Test func theSDKsExportersOverHTTPAndGRPCGiveWhatTheFileExporterGives() throws {
        let server = try Server()
        let http = try Self.peer("otlp_send.py", ["http/protobuf", server.http + "/v1/traces"])
        #expect(http.status == 0, "\(http.output)")
        #expect(http.output.contains("exported 11 spans over http/protobuf, 0 failed"))
        let received = try Workspace(path: server.workspacePath)
        let afterHTTP = try received.traceSummaries()
        // The same runs sent again over gRPC change nothing: gRPC reads them as HTTP did.
        let grpc = try Self.peer("otlp_send.py", ["grpc", server.grpc])
        #expect(grpc.status == 0, "\(grpc.output)")
        #expect(try received.traceSummaries().map(\.spanCount) == afterHTTP.map(\.spanCount))
        // Other ids over gRPC: three more traces.
        let other = try Self.peer("otlp_send.py", ["grpc", server.grpc, "8"])
        #expect(other.status == 0, "\(other.output)")
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.output.contains("stopped: 33 spans stored from 33 requests"), "\(stopped.output)")

        let all = try received.traceSummaries()
        #expect(all.count == 6)
        #expect(all.prefix(3).allSatisfy { $0.sourceFile == "OTLP/HTTP" })
        #expect(all.suffix(3).allSatisfy { $0.sourceFile == "OTLP/gRPC" })
        // Against the file the SDK's file exporter wrote from the same spans.
        let file = try Workspace(path: TestEnvironment.temporaryDirectory() + "/f.sqlite")
        _ = try TraceService(workspace: file).importFiles([
            TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/otlp-genai.jsonl").path
        ])
        let imported = try file.traceSummaries()
        #expect(imported.map(\.externalID) == afterHTTP.map(\.externalID))
        for (a, b) in zip(imported, afterHTTP) {
            let fromFile = Self.content(try TraceService(workspace: file).trace(a.id))
            let fromNetwork = Self.content(try TraceService(workspace: received).trace(b.id))
            #expect(fromFile == fromNetwork)
            #expect((a.stepCount, a.errorCount, a.inputTokens) == (b.stepCount, b.errorCount, b.inputTokens))
        }
    }

    /// The `openai` client against a local chat-completions server, instrumented by the official
    /// GenAI instrumentation and by OpenInference, exported over OTLP/HTTP.
    @Test func openaiInstrumentationsArriveAsAgentTurns() throws {
        let server = try Server(["--no-grpc"])
        for dialect in ["genai", "openinference"] {
            let run = try Self.peer("otlp_openai.py", [dialect, server.http + "/v1/traces", "weather-1"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("It is sunny, 21 °C in Paris."))
            #expect(run.output.contains("exported 4 spans, 0 failed"))
        }
        #expect(server.stop().status == 0)
        let workspace = try Workspace(path: server.workspacePath)
        let traces = try workspace.traceSummaries()
        #expect(traces.count == 2)
        for summary in traces {
            #expect(summary.name == "invoke_agent weather")
            #expect((summary.spanCount, summary.stepCount) == (4, 3))
            #expect((summary.inputTokens, summary.outputTokens) == (57 + 92, 17 + 9))
            #expect(summary.models == ["gpt-4o-mini-2024-07-18"])
            let trace = try TraceService(workspace: workspace).trace(summary.id)
            #expect(trace.spans.map(\.kind) == [.agent, .llm, .tool, .llm])
            #expect(trace.spans[2].tool?.name == "get_weather")
            #expect(trace.spans[2].tool?.arguments == #"{"city": "Paris"}"#)
            #expect(trace.spans[2].tool?.result == "sunny, 21 °C")
        }
        // OpenInference puts the messages on the span; the GenAI instrumentation (2.3b0) sends
        // them as log events, which a trace endpoint does not receive.
        let openinference = try TraceService(workspace: workspace).trace(traces[1].id)
        #expect(openinference.spans[1].input.map(\.text) == ["What is the weather in Paris?"])
        #expect(openinference.spans[1].output.first?.toolCalls.first?.name == "get_weather")
        #expect(openinference.spans[3].output.map(\.text) == ["It is sunny, 21 °C in Paris."])
    }
}
