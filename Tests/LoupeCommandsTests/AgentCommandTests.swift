import Foundation
import GRDB
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Synchronization
import Testing

/// The OpenAI-compatible client against a local server replaying recorded responses
/// (scripts/fixtures/openai_sse.py), and `loupe agent run` end to end through the real binary.
@Suite(.serialized) struct AgentCommandTests {
    static let corpus = """
        {"id": "a1", "title": "Heated wings", "text": "Aeroelastic models of heated high speed aircraft must keep the thermal similarity parameters. The structural stiffness must scale with the dynamic pressure."}
        {"id": "a2", "title": "Boundary layers", "text": "Heat transfer in the laminar boundary layer of a flat plate. Transition moves forward with roughness."}
        {"id": "a3", "title": "Shells", "text": "Buckling of thin cylindrical shells under axial compression."}

        """

    private func workspace() throws -> (file: String, directory: String) {
        let directory = TestEnvironment.temporaryDirectory()
        let corpus = directory + "/corpus.jsonl"
        try Self.corpus.write(toFile: corpus, atomically: true, encoding: .utf8)
        let file = directory + "/w.sqlite"
        let result = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        #expect(result.status == 0, "\(result.error)")
        return (file, directory)
    }

    private let request = ChatRequest(
        messages: [Message(role: "system", text: "Be brief."), Message(role: "user", text: "heated aircraft models?")],
        tools: [AgentTool.calculator.spec])

    @Test func aStreamedToolCallIsAssembledFromItsPieces() throws {
        let server = try LocalChatServer(replies: [.fixture("tool-call.sse")])
        defer { server.stop() }
        let provider = OpenAICompatibleProvider(
            baseURL: URL(string: server.baseURL)!, model: "gpt-4o-mini", apiKey: "sk-test-key")
        let response = try provider.complete(request) { _ in }
        let call = try #require(response.message.toolCalls.first)
        #expect(call.id == "call_search1" && call.name == "search" && call.argumentsError == nil)
        #expect(try JSONValue.parse(call.arguments)["k"] == .number(3))
        #expect(response.usage == Usage(inputTokens: 412, outputTokens: 31, cacheReadTokens: 256))
        #expect(response.model == "gpt-4o-mini-2024-07-18" && response.finishReason == "tool_calls")
        // What went over the wire: the bearer key, a streaming request with usage, the tools.
        let sent = try #require(server.requests.first)
        #expect(sent.line == "POST /v1/chat/completions HTTP/1.1")
        #expect(sent.headers["authorization"] == "Bearer sk-test-key")
        let body = try JSONValue.parse(sent.body)
        #expect(body["stream"] == .bool(true) && body["stream_options"]?["include_usage"] == .bool(true))
        #expect(body["tools"]?.array?.first?["function"]?["name"] == "calculator")
        #expect(body["messages"]?.array?.map { $0["role"] } == ["system", "user"])
    }

    @Test func textArrivesPieceByPieceAndAWholeResponseParsesToo() throws {
        let server = try LocalChatServer(replies: [.fixture("text.sse"), .fixture("complete.json")])
        defer { server.stop() }
        var provider = OpenAICompatibleProvider(baseURL: URL(string: server.baseURL)!, model: "m", apiKey: nil)
        let pieces = Mutex<[String]>([])
        let streamed = try provider.complete(request) { piece in pieces.withLock { $0.append(piece) } }
        #expect(streamed.message.text == "Heated models must also match the thermal similarity parameters.")
        #expect(pieces.withLock { $0.count } == 9)
        #expect(server.requests[0].headers["authorization"] == nil)
        provider.stream = false
        let whole = try provider.complete(request) { _ in }
        #expect(whole.message.toolCalls.first?.id == "call_search2" && whole.usage.inputTokens == 412)
        #expect(try JSONValue.parse(server.requests[1].body)["stream"] == nil)
    }

    @Test func aRateLimitIsRetriedAndTheRunIsRecordedWithoutTheKey() throws {
        let (file, _) = try workspace()
        let server = try LocalChatServer(replies: [
            try .fixture("error.json", status: 429), try .fixture("tool-call.sse"), try .fixture("answer.sse"),
        ])
        defer { server.stop() }
        let secret = "sk-loupe-test-\(UUID().uuidString)"
        let result = try TestEnvironment.run(
            [
                "--workspace", file, "agent", "run", "--provider", "openai", "--base-url", server.baseURL, "--model",
                "gpt-4o-mini", "--retries", "2", "How should heated aircraft models be built?",
            ], environment: ["OPENAI_API_KEY": secret])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("answer: The model must keep the structural and thermal similarity parameters."))
        #expect(result.output.contains("Rate limit reached"))
        #expect(server.requests.count == 3)
        #expect(server.requests.allSatisfy { $0.headers["authorization"] == "Bearer \(secret)" })
        // The search tool ran for real on the workspace, and its hits went back to the model.
        let third = try JSONValue.parse(server.requests[2].body)
        let toolMessage = try #require(third["messages"]?.array?.last)
        #expect(toolMessage["role"] == "tool" && toolMessage["tool_call_id"] == "call_search1")
        #expect(toolMessage["content"]?.string?.contains("\"title\":\"Heated wings\"") == true)

        let workspace = try Workspace(path: file)
        let trace = try #require(try workspace.traces.traceSummaries().first)
        #expect(trace.format == "loupe" && trace.errorCount == 1)
        let spans = try workspace.traces.spanRows(trace: trace.id)
        #expect(spans.map(\.kind) == ["agent", "llm", "llm", "tool", "llm", "tool"])
        #expect(spans[1].status == "error" && spans[1].statusMessage?.contains("HTTP 429") == true)
        #expect(spans[2].inputTokens == 412 && spans[2].cacheReadTokens == 256)
        #expect(spans[0].status == "ok")
        // The key is in no byte of the workspace (nor its WAL).
        for path in [file, file + "-wal"] where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data(secret.utf8)) == nil)
        }
    }

    @Test func aKeyEchoedInAProvidersErrorIsStoredAndPrintedNowhere() throws {
        let (file, _) = try workspace()
        let secret = "sk-loupe-test-\(UUID().uuidString)"
        let body = #"{"error":{"message":"Incorrect API key provided: Bearer "# + secret + #""}}"#
        let server = try LocalChatServer(replies: [
            LocalChatServer.Reply(status: 401, contentType: "application/json", body: Data(body.utf8))
        ])
        defer { server.stop() }
        let result = try TestEnvironment.run(
            [
                "--workspace", file, "agent", "run", "--provider", "openai", "--base-url", server.baseURL, "--model",
                "m", "--retries", "0", "q",
            ], environment: ["OPENAI_API_KEY": secret])
        #expect(result.status != 0)
        #expect(result.error.contains("HTTP 401: Incorrect API key provided: Bearer [redacted]"), "\(result.error)")
        #expect(!result.output.contains(secret) && !result.error.contains(secret))
        let workspace = try Workspace(path: file)
        let trace = try #require(try workspace.traces.traceSummaries().first)
        let messages = try workspace.traces.spanRows(trace: trace.id).compactMap(\.statusMessage)
        #expect(messages.contains { $0.contains("[redacted]") })
        for path in [file, file + "-wal"] where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data(secret.utf8)) == nil)
        }
    }

    /// A model can be made to repeat what it was sent; an answer with the key in it is stored and
    /// printed with the key taken out, streamed or not.
    @Test(arguments: [false, true])
    func aKeyEchoedInASuccessfulAnswerIsStoredAndPrintedNowhere(streamed: Bool) throws {
        let (file, _) = try workspace()
        let secret = "sk-loupe-test-\(UUID().uuidString)"
        let reply: LocalChatServer.Reply
        if streamed {
            let chunks = ["Your key is ", secret, "."].map { piece in
                let chunk: JSONValue = .object([
                    "id": "chatcmpl-echo", "object": "chat.completion.chunk", "model": "m",
                    "choices": .array([.object(["index": .number(0), "delta": .object(["content": .string(piece)])])]),
                ])
                return "data: \(chunk.compactJSON)\n\n"
            }
            reply = LocalChatServer.Reply(
                status: 200, contentType: "text/event-stream", body: Data((chunks.joined() + "data: [DONE]\n\n").utf8))
        } else {
            reply = EvalCommandTests.completion("Your key is \(secret).", id: 1)
        }
        let server = try LocalChatServer(replies: [reply])
        defer { server.stop() }
        let result = try TestEnvironment.run(
            [
                "--workspace", file, "agent", "run", "--provider", "openai", "--base-url", server.baseURL, "--model",
                "m", "--retries", "0", "q",
            ] + (streamed ? [] : ["--no-stream"]), environment: ["OPENAI_API_KEY": secret])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("Your key is [redacted]."), "\(result.output)")
        #expect(!result.output.contains(secret) && !result.error.contains(secret))
        for path in [file, file + "-wal"] where FileManager.default.fileExists(atPath: path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(bytes.range(of: Data(secret.utf8)) == nil)
        }
    }

    /// `--timeout` bounds the whole run, inside a model call too: a server that trickles its
    /// answer (a write every half second, never idle long enough for URLSession's timeout) would
    /// otherwise hold the agent until it finished.
    @Test func theTimeLimitStopsAModelCallThatTrickles() throws {
        let (file, _) = try workspace()
        var reply = try LocalChatServer.Reply.fixture("text.sse")
        reply.pauseMicroseconds = 500_000
        let server = try LocalChatServer(replies: [reply])
        defer { server.stop() }
        let result = try TestEnvironment.run([
            "--workspace", file, "agent", "run", "--provider", "openai", "--base-url", server.baseURL, "--model",
            "m", "--retries", "0", "--timeout", "2", "q",
        ])
        #expect(result.status != 0)
        #expect((result.output + result.error).contains("time limit 2 s reached"), "\(result.output)\(result.error)")
        let workspace = try Workspace(path: file)
        let trace = try #require(try workspace.traces.traceSummaries().first)
        let call = try #require(try workspace.traces.spanRows(trace: trace.id).first { $0.kind == "llm" })
        #expect(call.statusMessage?.contains("no complete response within") == true, "\(call.statusMessage ?? "")")
    }

    @Test func theOfflineProviderSearchesReadsAndCites() throws {
        let (file, _) = try workspace()
        var result = try TestEnvironment.run([
            "--workspace", file, "agent", "what similarity must aeroelastic models of heated aircraft keep?",
        ])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("tool   search:"))
        #expect(result.output.contains("tool   read: chunk"))
        #expect(
            result.output.contains(
                "answer: Aeroelastic models of heated high speed aircraft must keep the thermal similarity parameters. [chunk 1]"
            ))
        result = try TestEnvironment.run(["--workspace", file, "agent", "run", "What is (17 + 25) * 3?"])
        #expect(result.output.contains("answer: (17 + 25) * 3 = 126"))
        result = try TestEnvironment.run(["--workspace", file, "agent", "run", "How many documents are there?"])
        #expect(result.output.contains("tool   sql: documents ⏎ 3"))
        #expect(result.output.contains("answer: documents: 3"))
        // A limit ends the run as an error, recorded like any other.
        result = try TestEnvironment.run([
            "--workspace", file, "agent", "run", "--max-steps", "1", "what about shells?",
        ])
        #expect(result.status != 0)
        #expect(result.output.contains("✗ step limit 1 reached"))
        let summaries = try Workspace(path: file).traces.traceSummaries()
        #expect(summaries.count == 4 && summaries.allSatisfy { $0.format == "loupe" })
    }

    @Test func theSqlToolRefusesWrites() throws {
        let (file, _) = try workspace()
        let workspace = try Workspace(path: file)
        #expect(throws: WorkspaceError.self) {
            try workspace.agentTables.readOnlyQuery("DELETE FROM documents", limit: 5)
        }
        #expect(throws: WorkspaceError.self) {
            try workspace.agentTables.readOnlyQuery("SELECT 1; DROP TABLE documents", limit: 5)
        }
        let rows = try workspace.agentTables.readOnlyQuery("SELECT external_id FROM documents ORDER BY 1", limit: 2)
        #expect(rows.rows == [["a1"], ["a2"]] && rows.truncated)
    }
}

/// `trace fork` and `trace diff` on a run of our own agent.
@Suite(.serialized) struct ForkAndDiffCommandTests {
    @Test func aForkedToolResultChangesTheAnswerAndTheDiffShowsWhere() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let corpus = directory + "/corpus.jsonl"
        try AgentCommandTests.corpus.write(toFile: corpus, atomically: true, encoding: .utf8)
        let file = directory + "/w.sqlite"
        _ = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        var result = try TestEnvironment.run([
            "--workspace", file, "agent", "what similarity must aeroelastic models of heated aircraft keep?",
        ])
        #expect(result.status == 0)
        // Span 4 is the read; give it another chunk's text and let the agent go on.
        result = try TestEnvironment.run([
            "--workspace", file, "trace", "fork", "1", "--at", "4", "--result",
            "chunk 3 · document a3 · Shells\nBuckling of thin cylindrical shells under axial compression.",
        ])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("answer: Buckling of thin cylindrical shells under axial compression."))
        #expect(result.output.contains("fork: trace 2 (trace 1 at span 4) — loupe trace diff 1 2"))
        let workspace = try Workspace(path: file)
        let fork = try #require(try workspace.traces.traceSummary(id: 2))
        #expect(fork.parentTraceID == 1 && fork.forkOrdinal == 4)
        result = try TestEnvironment.run(["--workspace", file, "trace", "diff", "1", "2"])
        #expect(result.output.contains("3 same, 3 changed, 0 only in 1, 0 only in 2 — first divergence at row 4"))
        #expect(result.output.contains("▶   4 ≠  #4 tool read"))
        // The fork link, whichever side the fork is on.
        #expect(result.output.contains("  ↳ trace 2 forks trace 1 at span 4\n"), "\(result.output)")
        result = try TestEnvironment.run(["--workspace", file, "trace", "diff", "2", "1"])
        #expect(result.output.contains("  ↳ trace 2 forks trace 1 at span 4\n"), "\(result.output)")
        let json = try JSONValue.parse(
            Data(try TestEnvironment.run(["--workspace", file, "trace", "diff", "1", "2", "--json"]).output.utf8))
        #expect(json["first_divergence"] == .number(3))
        #expect(json["fork"] == .string("trace 2 forks trace 1 at span 4"))
        #expect(json["fork_point"]?["span"] == .number(4) && json["fork_point"]?["token"] == .null)
        #expect(json["fork_point"]?["fork"] == .number(2) && json["fork_point"]?["parent"] == .number(1))
        #expect(
            json["rows"]?.array?.map { $0["change"]?.string } == [
                "same", "same", "same", "changed", "changed", "changed",
            ])
        // A change of the wrong kind for the span is refused by name.
        result = try TestEnvironment.run(["--workspace", file, "trace", "fork", "1", "--at", "4", "--message", "x"])
        #expect(result.status != 0 && result.error.contains("span 4 is a tool span"))
        // At a model call, a new user message re-runs the call.
        result = try TestEnvironment.run([
            "--workspace", file, "trace", "fork", "1", "--at", "1", "--message", "What is 6 * 7?",
        ])
        #expect(result.output.contains("answer: 6 * 7 = 42"))
        result = try TestEnvironment.run(["--workspace", file, "trace", "diff", "1", "3"])
        #expect(result.output.contains("first divergence at row 1"))
    }

    /// A workspace with the corpus and the offline agent's run on the heated-aircraft question
    /// (spans: the root, a model call, search, a model call, read, …), with `arguments` added.
    static func offlineRun(_ arguments: [String]) throws -> (
        file: String, run: (status: Int32, output: String, error: String)
    ) {
        let directory = TestEnvironment.temporaryDirectory()
        let corpus = directory + "/corpus.jsonl"
        try AgentCommandTests.corpus.write(toFile: corpus, atomically: true, encoding: .utf8)
        let file = directory + "/w.sqlite"
        _ = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        let run = try TestEnvironment.run(
            ["--workspace", file, "agent", "run"] + arguments
                + ["what similarity must aeroelastic models of heated aircraft keep?"])
        return (file, run)
    }

    static let shellsResult =
        "chunk 3 · document a3 · Shells\nBuckling of thin cylindrical shells under axial compression."

    /// A fork runs under the limits its parent ran with, counting the parent's calls before the
    /// fork point: a run stopped at its step limit stops there again unless the fork is given
    /// more steps, and what it is given is recorded for its own forks.
    @Test func aForkRunsUnderItsParentsLimits() throws {
        let (file, run) = try Self.offlineRun(["--max-steps", "2", "--timeout", "120"])
        #expect(run.status != 0 && run.error.contains("step limit 2 reached"), "\(run.output)\(run.error)")
        let service = TraceService(workspace: try Workspace(path: file))
        let parent = try service.trace(1)
        #expect(AgentLimits(recordedOn: parent.spans[0])?.maxSteps == 2)
        #expect(parent.spans.filter { $0.kind == .llm }.count == 2 && parent.spans[4].kind == .tool)

        // At span 4 (the read) both calls are behind: the fork makes none and stops as the parent did.
        var result = try TestEnvironment.run([
            "--workspace", file, "trace", "fork", "1", "--at", "4", "--result", Self.shellsResult,
        ])
        #expect(result.output.contains("✗ step limit 2 reached"), "\(result.output)\(result.error)")
        let stopped = try service.trace(2)
        #expect(stopped.spans.filter { $0.kind == .llm }.count == 2)
        var limits = try #require(AgentLimits(recordedOn: stopped.spans[0]))
        #expect(limits.maxSteps == 2 && limits.maxSeconds == 120)

        // One more step given: the fork answers from the edited result; the timeout is still the parent's.
        result = try TestEnvironment.run([
            "--workspace", file, "trace", "fork", "1", "--at", "4", "--result", Self.shellsResult, "--max-steps", "3",
        ])
        #expect(result.output.contains("answer: Buckling of thin cylindrical shells under axial compression."))
        let answered = try service.trace(3)
        #expect(answered.spans.filter { $0.kind == .llm }.count == 3)
        limits = try #require(AgentLimits(recordedOn: answered.spans[0]))
        #expect(limits.maxSteps == 3 && limits.maxSeconds == 120)
    }

    /// A fork's own steps start where the steps it copied end, not where its parent's whole run
    /// ended (the copied root's end): its timeline lines up with its parent's at the fork point.
    @Test func aForksStepsStartWhereTheCopiedStepsEnd() throws {
        let (file, run) = try Self.offlineRun([])
        #expect(run.status == 0, "\(run.output)\(run.error)")
        // The parent's run made to end an hour after its read, as a slow last step would.
        let hour: Int64 = 3_600_000_000_000
        try DatabaseQueue(path: file).write { db in
            try db.execute(
                sql: "UPDATE spans SET end_ns = end_ns + ? WHERE trace_id = 1 AND ordinal = 0", arguments: [hour])
        }
        let result = try TestEnvironment.run([
            "--workspace", file, "trace", "fork", "1", "--at", "4", "--result", Self.shellsResult,
        ])
        #expect(result.status == 0, "\(result.output)\(result.error)")
        let service = TraceService(workspace: try Workspace(path: file))
        let parent = try service.trace(1)
        let fork = try service.trace(2)
        let copied = try #require(parent.spans[4].endNs)
        let own = fork.spans.filter { $0.spanID.hasPrefix("fork.") }
        try #require(!own.isEmpty)
        // The copied spans keep their times; the fork's own start after them, within the minute
        // the offline continuation takes at most, an hour before the parent's root ended.
        #expect(fork.spans[1...4].map(\.startNs) == parent.spans[1...4].map(\.startNs))
        for span in own {
            #expect(span.startNs > copied && span.startNs - copied < 60_000_000_000, "\(span.name)")
        }
        #expect(fork.spans[0].startNs == parent.spans[0].startNs)
    }
}
