import Foundation
import GRDB
import LoupeStore
import Testing

/// `trace import|list|show` through the real binary on the sample traces.
@Suite(.serialized) struct TraceCommandTests {
    static let samples = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces").path

    @Test func importIsOneTransactionAndIdempotent() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let otlp = Self.samples + "/otlp-genai.jsonl"
        let chat = Self.samples + "/openai-chat.jsonl"
        // A broken file among good ones: nothing lands, and the message says where.
        let broken = directory + "/broken.jsonl"
        let lines = try String(contentsOfFile: otlp, encoding: .utf8).split(separator: "\n")
        try (lines.prefix(2).joined(separator: "\n") + "\n{\"resourceSpans\": [\n").write(
            toFile: broken, atomically: true, encoding: .utf8)
        var result = try TestEnvironment.run(["--workspace", file, "trace", "import", otlp, broken])
        #expect(result.status != 0)
        #expect(
            result.error.contains(
                "broken.jsonl:3: not JSON (line 1, column 20: unexpected end of input); nothing was imported"))
        let workspace = try Workspace(path: file)
        #expect(try workspace.traces.traceSummaries().isEmpty)
        result = try TestEnvironment.run(["--workspace", file, "trace", "import", otlp, chat])
        #expect(result.status == 0)
        #expect(result.output.contains("2 files: 6 traces, 23 spans — 6 added, 0 replaced, 0 unchanged"))
        result = try TestEnvironment.run(["--workspace", file, "trace", "import", otlp])
        #expect(result.output.contains("0 added, 0 replaced, 3 unchanged"))
        #expect(try workspace.traces.traceSummaries().count == 6)
        let spans = try workspace.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM spans") }
        #expect(spans == 23)
    }

    @Test func listAndShowGiveWhatThePanelShows() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        _ = try TestEnvironment.run(["--workspace", file, "trace", "import", Self.samples + "/otlp-genai.jsonl"])
        let list = try TestEnvironment.run(["--workspace", file, "trace", "list"])
        #expect(
            list.output.contains(
                "    1  otlp           5      6       1     4.21 s         1485/102  $0.000265  invoke_agent cranfield-qa\n"
            ))
        let show = try TestEnvironment.run(["--workspace", file, "trace", "show", "1"])
        #expect(
            show.output.contains("trace 1 (otlp): invoke_agent cranfield-qa — 5 steps, 1 error, 4.21 s, cost $0.000265")
        )
        #expect(
            show.output.contains(
                "2.40 s    2.0 ms  tool                                 error     execute_tool calculator  ✗ division by zero"
            ))
        struct Shown: Decodable {
            struct Span: Decodable {
                var kind: String
                var inputTokens: Int?
            }
            var spans: [Span]
            var steps: [Int]
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let json = try TestEnvironment.run(["--workspace", file, "trace", "show", "1", "--json"])
        let shown = try decoder.decode(Shown.self, from: Data(json.output.utf8))
        #expect(shown.spans.map(\.kind) == ["agent", "llm", "tool", "llm", "tool", "llm"])
        #expect(shown.steps == [1, 2, 3, 4, 5])
        #expect(shown.spans[1].inputTokens == 412)
        // Costs come from the price table: a new workspace has the built-in list prices (gpt-4o-mini's
        // here), a model without a price says so, never $0.
        #expect(list.output.contains("310/19   no price  qa-chain"))
        let priced = try TestEnvironment.run(["--workspace", file, "trace", "show", "1"])
        // 412 in (256 cached), 23 out at gpt-4o-mini's 0.15 / 0.075 / 0.60 per 1M tokens.
        #expect(priced.output.contains("412/23  $0.000056"))
        // The workspace's own price replaces the built-in one: ten times the price, ten times the cost.
        let set = try TestEnvironment.run([
            "--workspace", file, "prices", "set", "gpt-4o-mini", "--input", "1.5", "--output", "6", "--cached", "0.75",
        ])
        #expect(set.status == 0, "\(set.error)")
        #expect(
            try TestEnvironment.run(["--workspace", file, "trace", "show", "1"]).output.contains("412/23  $0.000564"))
        let prices = try TestEnvironment.run(["--workspace", file, "prices", "list"]).output
        #expect(prices.contains("gpt-4o-mini                       1.500    0.750    6.000  set by hand"), "\(prices)")
        #expect(prices.contains("built-in: OpenAI list price on 2025-06-01") && !prices.contains("0.150    0.075"))
        let removed = try TestEnvironment.run(["--workspace", file, "prices", "remove", "gpt-4o"])
        #expect(removed.status != 0 && removed.error.contains("gpt-4o's price is built in"), "\(removed.error)")
        _ = try TestEnvironment.run([
            "--workspace", file, "prices", "load",
            TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/prices.csv").path,
        ])
        #expect(
            try TestEnvironment.run(["--workspace", file, "trace", "show", "1"]).output.contains("412/23  $0.000056"))
        let qa = try TestEnvironment.run(["--workspace", file, "trace", "show", "3"])
        #expect(qa.output.contains("310/19   no price"))
        // Export writes files the importer reads back.
        let exported = directory + "/t1.json"
        let wrote = try TestEnvironment.run([
            "--workspace", file, "trace", "export", "1", "--format", "otlp", "-o", exported,
        ])
        #expect(wrote.output.contains("wrote trace 1 as otlp to"))
        let again = directory + "/again.sqlite"
        let reimport = try TestEnvironment.run(["--workspace", again, "trace", "import", exported])
        #expect(reimport.output.contains("1 file: 1 trace, 6 spans — 1 added"))
        let bad = try TestEnvironment.run(["--workspace", file, "trace", "export", "1", "--format", "yaml"])
        #expect(bad.status != 0 && bad.error.contains("--format yaml: use otlp, openai or atif"))
        let missing = try TestEnvironment.run(["--workspace", file, "trace", "show", "9"])
        #expect(missing.status != 0 && missing.error.contains("no such trace"))
    }
}
