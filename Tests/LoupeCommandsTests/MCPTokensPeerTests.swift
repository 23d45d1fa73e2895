import Foundation
import LoupeBase
import Testing

/// `trace_tokens` over the wire: the official MCP Python SDK (scripts/reference/mcp_client.py
/// `tokens`) asks `loupe mcp` over stdio for the tokens SmolLM2 generated in a real
/// `loupe agent run --provider local`, whole and a few tokens a page, and both must be what
/// `loupe trace tokens --json` prints for the same trace and span. Needs the model
/// (`scripts/fetch-smollm2`), as ``LocalAgentTests`` does, and the Python peers.
@Suite(.serialized) struct MCPTokensPeerTests {
    @Test func thePythonClientReadsALocalRunsTokensAsTraceTokensPrintsThem() throws {
        try #require(
            FileManager.default.fileExists(atPath: LocalAgentTests.modelPath),
            "\(LocalAgentTests.modelPath) is missing: run scripts/fetch-smollm2")
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let run = try TestEnvironment.run([
            "--workspace", workspace, "agent", "run", "--provider", "local", "--max-steps", "1",
            "What is (17 + 25) * 3?",
        ])
        #expect(run.output.contains("provider local"), "\(run.output)\(run.error)")
        let cli = try JSONValue.parse(
            try TestEnvironment.run(["--workspace", workspace, "trace", "tokens", "1", "--json"]).output)
        let spans = try #require(cli.array)
        let total = spans.flatMap { $0["choices"]?.array ?? [] }.reduce(0) { $0 + ($1.array?.count ?? 0) }
        try #require(total > 7, "the local run generated \(total) tokens: too few to page")

        let report = try MCPPeerTests.client(["tokens", "stdio", TestEnvironment.binary, workspace, "1", "7"])
        #expect(report["read_only"] == .bool(true))
        let whole = try #require(report["whole"]?["structured"])
        #expect(report["whole"]?["is_error"] == .bool(false))
        #expect(whole["spans"] == cli, "trace_tokens differs from loupe trace tokens --json")
        #expect(whole["total_tokens"]?.int == Int64(total) && whole["next_cursor"] == .null)
        #expect(report["whole"]?["text"]?.string?.contains("<untrusted-data>") == true)

        // Seven tokens a page: every page but the last is full, and the pages spell the CLI's tokens.
        let pages = try #require(report["pages"]?.array)
        #expect(pages.count == (total + 6) / 7)
        #expect(pages.dropLast().allSatisfy { $0["shown_tokens"]?.int == 7 })
        var paged: [String: [[JSONValue]]] = [:]
        for span in pages.flatMap({ $0["spans"]?.array ?? [] }) {
            let id = try #require(span["span"]?.string)
            let choices = try #require(span["choices"]?.array)
            var known = paged[id] ?? choices.map { _ in [] }
            for (index, choice) in choices.enumerated() { known[index] += choice.array ?? [] }
            paged[id] = known
        }
        for span in spans {
            let id = try #require(span["span"]?.string)
            #expect(paged[id] == span["choices"]?.array?.map { $0.array ?? [] }, "span \(id) paged")
            // One span by its id: `loupe trace tokens --span ID --json`.
            let one = try JSONValue.parse(
                try TestEnvironment.run(["--workspace", workspace, "trace", "tokens", "1", "--span", id, "--json"])
                    .output)
            #expect(report["by_span"]?[id]?["spans"] == one, "span \(id)")
        }
        #expect(report["missing_span"]?["is_error"] == .bool(true))
        #expect(report["missing_span"]?["text"]?.string?.contains("trace 1 has no span nope") == true)
        #expect(report["bad_limit"]?["code"]?.int == -32602, "\(report["bad_limit"]?.compactJSON ?? "")")
    }
}
