import Foundation
import LoupeAgents
import LoupeBase
import LoupeBench
import LoupeCommands
import LoupeKit
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The real `loupe serve` receiving what the real OpenTelemetry Python SDK and instrumentations
/// export over the network (the Python peers from PyPI, `scripts/python-peers`).
@Suite(.serialized) struct OTLPPeerTests {
    /// A `loupe serve` on free loopback ports (``LoupeServer``), storing what it receives into
    /// `workspace`, a fresh file by default.
    static func serve(_ extra: [String] = [], workspace: String? = nil) throws -> (
        server: LoupeServer, workspace: String
    ) {
        let path = workspace ?? TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let server = try LoupeServer(
            ["serve", "--workspace", path, "--http-port", "0", "--grpc-port", "0"] + extra)
        return (server, path)
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
    /// JSON against the protobuf message).
    static func content(_ trace: Trace) -> Trace {
        var trace = trace
        for i in trace.spans.indices {
            trace.spans[i].raw = nil
            trace.spans[i].rawProtobuf = nil
        }
        return trace
    }

    @Test func theSDKsExportersOverHTTPAndGRPCGiveWhatTheFileExporterGives() throws {
        let (server, workspacePath) = try Self.serve()
        let endpoint = try server.otlpHTTP()
        let grpcAddress = try server.otlpGRPC()
        let http = try Self.peer("otlp_send.py", ["http/protobuf", endpoint + "/v1/traces"])
        #expect(http.status == 0, "\(http.output)")
        #expect(http.output.contains("exported 11 spans over http/protobuf, 0 failed"))
        let received = try Workspace(path: workspacePath)
        let afterHTTP = try received.traces.traceSummaries()
        // The same runs sent again over gRPC change nothing: gRPC reads them as HTTP did.
        let grpc = try Self.peer("otlp_send.py", ["grpc", grpcAddress])
        #expect(grpc.status == 0, "\(grpc.output)")
        #expect(try received.traces.traceSummaries().map(\.spanCount) == afterHTTP.map(\.spanCount))
        // Other ids over gRPC: three more traces.
        let other = try Self.peer("otlp_send.py", ["grpc", grpcAddress, "8"])
        #expect(other.status == 0, "\(other.output)")
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.output.contains("stopped: 33 spans stored from 33 requests"), "\(stopped.output)")

        #expect(
            try received.traces.traceSummaries().map(\.externalID).prefix(3) == afterHTTP.map(\.externalID).prefix(3))
        try Self.expectTheSDKsRuns(in: TraceService(workspace: received))
    }

    /// The six traces `otlp_send.py` sent (three over HTTP, three more over gRPC) are there, and
    /// the first three equal what the SDK's file exporter wrote from the same spans.
    static func expectTheSDKsRuns(in received: TraceService) throws {
        let all = try received.tables.traceSummaries()
        #expect(all.count == 6)
        #expect(all.prefix(3).allSatisfy { $0.sourceFile == "OTLP/HTTP" })
        #expect(all.suffix(3).allSatisfy { $0.sourceFile == "OTLP/gRPC" })
        let file = try Workspace(path: TestEnvironment.temporaryDirectory() + "/f.sqlite")
        _ = try TraceService(workspace: file).importFiles([
            TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/otlp-genai.jsonl").path
        ])
        let imported = try file.traces.traceSummaries()
        #expect(imported.map(\.externalID) == all.prefix(3).map(\.externalID))
        for (a, b) in zip(imported, all) {
            let fromFile = Self.content(try TraceService(workspace: file).trace(a.id))
            #expect(fromFile == Self.content(try received.trace(b.id)))
            #expect((a.stepCount, a.errorCount, a.inputTokens) == (b.stepCount, b.errorCount, b.inputTokens))
        }
    }

    /// A team's receiver: `loupe serve` storing into PostgreSQL what the SDK sends one span a
    /// request (so each trace grows over many requests), read back equal to the file's import.
    @Test func aServerOnPostgreSQLStoresWhatTheSDKSends() throws {
        let cluster = try PostgresCluster.shared
        let url = cluster.url(try cluster.database("serve"))
        let (server, _) = try Self.serve(workspace: url)
        let endpoint = try server.otlpHTTP()
        let grpcAddress = try server.otlpGRPC()
        let http = try Self.peer("otlp_send.py", ["http/protobuf", endpoint + "/v1/traces"])
        #expect(http.status == 0, "\(http.output)")
        let grpc = try Self.peer("otlp_send.py", ["grpc", grpcAddress, "8"])
        #expect(grpc.status == 0, "\(grpc.output)")
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.output.contains("stopped: 22 spans stored from 22 requests"), "\(stopped.output)")
        #expect(!stopped.output.contains(PostgresCluster.password))

        let store = try PostgresStore.open(try PostgresURL(url, environment: [:]))
        defer { store.close() }
        try Self.expectTheSDKsRuns(in: TraceService(tables: TraceTables(store)))
        // The commands read it where it is.
        let listed = try TestEnvironment.run(["trace", "list", "--workspace", url])
        #expect(listed.status == 0 && listed.output.components(separatedBy: "\n").count >= 7, "\(listed.error)")
    }

    /// PostgreSQL restarts under a receiver: it stays up, and what it acknowledges afterwards is
    /// stored (a request caught by the restart is refused, not half-written, and sent again).
    @Test func aServerOnPostgreSQLRidesOutARestart() throws {
        let cluster = try PostgresCluster.dedicated()
        defer { cluster.shutdown() }
        let url = cluster.url(try cluster.database("serverestart"))
        let file = TestEnvironment.temporaryDirectory() + "/f.sqlite"
        let imported = try TestEnvironment.run([
            "trace", "import", "--workspace", file,
            TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/otlp-genai.jsonl").path,
        ])
        #expect(imported.status == 0, "\(imported.error)")
        let (server, _) = try Self.serve(["--no-grpc"], workspace: url)
        let endpoint = try server.otlpHTTP()
        /// Sends trace `id` of the file, again while it is refused (at most 20 tries).
        func send(_ id: Int) throws -> Bool {
            for _ in 0..<20 {
                let sent = try TestEnvironment.run([
                    "trace", "export", String(id), "--to", endpoint, "--workspace", file,
                ])
                if sent.status == 0 { return true }
                usleep(250_000)
            }
            return false
        }
        #expect(try send(1))
        try cluster.restart()
        #expect(try send(2))
        #expect(try send(3))
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.output)")
        let listed = try TestEnvironment.run(["trace", "list", "--json", "--workspace", url])
        #expect(listed.status == 0, "\(listed.error)")
        let traces = try #require(try JSONValue.parse(Data(listed.output.utf8)).array)
        #expect(traces.count == 3)
        #expect(traces.compactMap { $0["span_count"]?.number } == [6, 2, 3])
    }

    /// The `openai` client against a local chat-completions server, instrumented by the official
    /// GenAI instrumentation and by OpenInference, exported over OTLP/HTTP.
    @Test func openaiInstrumentationsArriveAsAgentTurns() throws {
        let (server, workspacePath) = try Self.serve(["--no-grpc"])
        let endpoint = try server.otlpHTTP()
        for dialect in ["genai", "openinference"] {
            let run = try Self.peer("otlp_openai.py", [dialect, endpoint + "/v1/traces", "weather-1"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("It is sunny, 21 °C in Paris."))
            #expect(run.output.contains("exported 4 spans, 0 failed"))
        }
        #expect(server.stop().status == 0)
        let workspace = try Workspace(path: workspacePath)
        let traces = try workspace.traces.traceSummaries()
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

    /// The OpenAI Agents SDK traced by OpenInference's processor for it, over OTLP/HTTP.
    @Test func agentsSDKSpansArriveThroughOpenInferencesProcessor() throws {
        let (server, workspacePath) = try Self.serve(["--no-grpc"])
        let endpoint = try server.otlpHTTP()
        let run = try Self.peer("openai_agents.py", ["--otlp", endpoint + "/v1/traces"])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("It is sunny, 19 °C in Lyon right now."))
        #expect(run.output.contains("guardrail tripped"))
        #expect(run.output.contains("exported 18 spans, 0 failed"))
        #expect(server.stop().status == 0)
        let workspace = try Workspace(path: workspacePath)
        let traces = try workspace.traces.traceSummaries()
        #expect(traces.map(\.name) == ["Support desk", "Support desk"])
        #expect(traces.map(\.sessionID) == ["thread-42", "thread-42"])
        #expect(traces.map(\.spanCount) == [13, 5])
        #expect((traces[0].inputTokens, traces[0].outputTokens) == (88 + 120 + 151, 12 + 18 + 14))
        #expect(traces.map(\.errorCount) == [0, 1])
        let answered = try TraceService(workspace: workspace).trace(traces[0].id)
        #expect(answered.spans.filter { $0.kind == .llm }.count == 3)
        let weather = try #require(answered.spans.first { $0.tool?.name == "get_weather" })
        #expect(weather.tool?.arguments.contains("Lyon") == true)
        #expect(weather.tool?.result == "sunny, 19 °C")
        #expect(answered.spans.contains { $0.kind == .eval && $0.name == "no_passwords" })
        let sessions = try TraceService(workspace: workspace).sessions()
        #expect(sessions.map(\.id) == ["thread-42"])
    }

    /// Traces imported from files, sent on by `loupe trace export --to` to another `loupe serve`.
    @Test func traceExportSendsTracesOnToAnotherEndpoint() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let source = directory + "/a.sqlite"
        let sample = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces").path
        let imported = try TestEnvironment.run([
            "trace", "import", "--workspace", source, sample + "/inspect-arith.eval", sample + "/otlp-genai.jsonl",
        ])
        #expect(imported.status == 0, "\(imported.error)")
        let (server, workspacePath) = try Self.serve(["--no-grpc"])
        let endpoint = try server.otlpHTTP()
        let ids = try Workspace(path: source).traces.traceSummaries().map { String($0.id) }
        for _ in 0..<2 {
            let sent = try TestEnvironment.run(
                ["trace", "export", "--workspace", source, "--to", endpoint] + ids,
                environment: ["OTEL_EXPORTER_OTLP_HEADERS": "x-team=loupe%20ci"])
            #expect(sent.status == 0, "\(sent.error)")
            #expect(sent.output.contains("sent \(ids.count) traces"), "\(sent.output)")
            #expect(sent.output.contains("to http://127.0.0.1:"), "\(sent.output)")
        }
        #expect(server.stop().status == 0)
        // Sent twice, stored once; the same traces, spans, tokens and errors.
        let original = try Workspace(path: source).traces.traceSummaries()
        let received = try Workspace(path: workspacePath).traces.traceSummaries()
        #expect(received.count == original.count)
        #expect(received.map(\.spanCount) == original.map(\.spanCount))
        #expect(received.map(\.name) == original.map(\.name))
        #expect(received.map(\.errorCount) == original.map(\.errorCount))
        #expect(received.map(\.inputTokens) == original.map(\.inputTokens))
        // OTLP traces keep their ids on the way.
        let otlp = original.filter { $0.format == "otlp" }.map(\.externalID)
        #expect(!otlp.isEmpty && otlp.allSatisfy(Set(received.map(\.externalID)).contains))

        // A refusal names the endpoint's answer and keeps the header's value to itself.
        let closed = try LoopbackPort.free()
        let refused = try TestEnvironment.run(
            [
                "trace", "export", "--workspace", source, "--to", "http://127.0.0.1:\(closed)/", "--header",
                "x-key=s3cr3t-value", ids[0],
            ])
        #expect(refused.status != 0)
        #expect(refused.error.contains("127.0.0.1:\(closed)/v1/traces"), "\(refused.error)")
        #expect(refused.error.contains("nothing is listening there"), "\(refused.error)")
        #expect(!refused.error.contains("NSURLErrorDomain"))
        #expect(!refused.error.contains("s3cr3t"))
        let malformed = try TestEnvironment.run(
            ["trace", "export", "--workspace", source, "--to", endpoint, "--header", "sk-s3cr3t-token", ids[0]])
        #expect(malformed.status != 0)
        #expect(malformed.error.contains("has no ="), "\(malformed.error)")
        #expect(!malformed.error.contains("s3cr3t"))
    }

    /// Arize Phoenix's server (from PyPI) on free loopback ports, with its default SQLite.
    final class Phoenix {
        let process = Process()
        let directory = TestEnvironment.temporaryDirectory()
        let port: Int
        var base: String { "http://127.0.0.1:\(port)" }

        init() throws {
            let ports = try LoopbackPort.free(count: 2)
            port = ports[0]
            process.executableURL = TestEnvironment.repositoryRoot.appendingPathComponent(".venv-peers/bin/phoenix")
            process.arguments = ["serve"]
            process.environment = PhoenixServer.environment(directory: directory, port: port, grpcPort: ports[1])
            FileManager.default.createFile(atPath: directory + "/log", contents: nil)
            let log = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/log"))
            process.standardOutput = log
            process.standardError = log
            try process.run()
        }

        /// Waits (at most two minutes) until it answers its health check.
        func ready() async throws {
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline {
                guard process.isRunning else { break }
                if let (_, response) = try? await URLSession.shared.data(from: URL(string: base + "/healthz")!),
                    (response as? HTTPURLResponse)?.statusCode == 200
                {
                    return
                }
                try await Task.sleep(for: .milliseconds(500))
            }
            let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
            throw CommandTestFailure("phoenix serve did not come up: \(log.suffix(2000))")
        }

        /// The spans of its default project, as its REST API gives them.
        func spans() async throws -> [JSONValue] {
            let url = URL(string: base + "/v1/projects/default/spans?limit=1000")!
            let (data, _) = try await URLSession.shared.data(from: url)
            return try JSONValue.parse(data)["data"]?.array ?? []
        }

        /// SIGTERM (it shuts down in a few seconds), SIGKILL after 20. Polled, not
        /// `waitUntilExit`, which spins forever when called from an async test.
        func stop() {
            process.terminate()
            for _ in 0..<200 where process.isRunning { usleep(100_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            for _ in 0..<50 where process.isRunning { usleep(100_000) }
        }
    }

    /// `loupe trace export --to` against a receiver nobody here wrote: Phoenix stores every span
    /// with its ids, parents, kinds (from the OpenInference attributes the export adds) and tokens.
    @Test func traceExportSendsTracesOnToPhoenix() async throws {
        let phoenix = try Phoenix()
        defer { phoenix.stop() }
        let source = TestEnvironment.temporaryDirectory() + "/a.sqlite"
        let sample = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces").path
        let imported = try TestEnvironment.run([
            "trace", "import", "--workspace", source, sample + "/inspect-arith.eval",
        ])
        #expect(imported.status == 0, "\(imported.error)")
        let summaries = try Workspace(path: source).traces.traceSummaries()
        let ids = summaries.map { String($0.id) }
        try await phoenix.ready()
        let sent = try TestEnvironment.run(["trace", "export", "--workspace", source, "--to", phoenix.base] + ids)
        #expect(sent.status == 0, "\(sent.error)")

        // What we sent, span by span: the export's own OTLP/JSON.
        let service = TraceService(workspace: try Workspace(path: source))
        var expected: [String: (trace: String, parent: String?, name: String)] = [:]
        for summary in summaries {
            let request = TraceExport.export(try service.trace(summary.id), as: .otlp)
            let scopes = request["resourceSpans"]?.array?.first?["scopeSpans"]?.array
            for span in scopes?.first?["spans"]?.array ?? [] {
                expected[span["spanId"]?.string ?? ""] = (
                    span["traceId"]?.string ?? "", span["parentSpanId"]?.string, span["name"]?.string ?? ""
                )
            }
        }
        #expect(expected.count == summaries.reduce(0) { $0 + $1.spanCount })
        // Phoenix inserts in the background: wait (boundedly) until all have landed.
        var spans: [JSONValue] = []
        for _ in 0..<60 {
            spans = try await phoenix.spans()
            if spans.count >= expected.count { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        #expect(spans.count == expected.count)
        for span in spans {
            let id = span["context"]?["span_id"]?.string ?? ""
            let want = try #require(expected[id], "Phoenix has a span we did not send: \(id)")
            #expect(span["context"]?["trace_id"]?.string == want.trace)
            #expect(span["parent_id"]?.string == want.parent)
            #expect(span["name"]?.string == want.name)
        }
        let kinds = Set(spans.compactMap { $0["span_kind"]?.string })
        #expect(kinds.isSuperset(of: ["LLM", "TOOL", "AGENT"]))
        let llm = spans.filter { $0["span_kind"]?.string == "LLM" }
        let tokens = llm.compactMap { $0["attributes"]?["llm.token_count.prompt"]?.int }.reduce(0, +)
        #expect(tokens == summaries.reduce(0) { $0 + ($1.inputTokens ?? 0) })
    }
}

extension LoupeServer {
    /// A `loupe serve`'s OTLP/HTTP base URL, `http://127.0.0.1:PORT` (without `/v1/traces`).
    func otlpHTTP() throws -> String { try address(/OTLP\/HTTP (http:\/\/[0-9.]+:[0-9]+)/) }

    /// A `loupe serve`'s OTLP/gRPC address, `127.0.0.1:PORT`.
    func otlpGRPC() throws -> String { try address(/OTLP\/gRPC ([0-9.]+:[0-9]+)/) }
}
