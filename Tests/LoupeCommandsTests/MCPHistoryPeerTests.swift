import Foundation
import LoupeBase
import LoupeTestSupport
import Testing

/// A write an agent makes through `loupe mcp --allow-writes` is recorded like any command, with
/// source `mcp` (schema v27), and `loupe history` shows it: driven by the official MCP Python SDK
/// (scripts/reference/mcp_write_client.py) over stdio, on a SQLite file and on PostgreSQL.
@Suite(.serialized) struct MCPHistoryPeerTests {
    typealias CommandTestFailure = OTLPPeerTests.CommandTestFailure

    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }

        /// A new, empty workspace: a file, or a database on the tests' PostgreSQL server.
        func workspace() throws -> String {
            switch self {
            case .sqlite: return TestEnvironment.temporaryDirectory() + "/w.sqlite"
            case .postgres:
                let cluster = try PostgresCluster.shared
                return cluster.url(try cluster.database("mcp-history"))
            }
        }
    }

    /// Runs scripts/reference/mcp_write_client.py and decodes its report.
    static func client(_ arguments: [String]) throws -> JSONValue {
        try PythonPeer.report("mcp_write_client.py", arguments)
    }

    @Test(arguments: Backend.allCases) func aLabelAnAgentWritesIsInTheHistoryAsMCP(_ backend: Backend) throws {
        let workspace = try backend.workspace()
        let root = TestEnvironment.repositoryRoot.path
        // The Inspect log is eval run 1.
        for line in [["workspace", "init"], ["trace", "import", "sample-data/traces/inspect-arith.eval"]] {
            let run = try TestEnvironment.run(line + ["--workspace", workspace], directory: root)
            try #require(run.status == 0, "\(line): \(run.error)")
        }
        let before =
            try JSONValue.parse(
                try TestEnvironment.run(["trace", "list", "--json", "--workspace", workspace]).output
            ).array?.count ?? -1
        let trace = root + "/sample-data/traces/openai-chat.jsonl"
        let suite = root + "/sample-data/evals/agent-calculator-offline.yaml"
        // The same suite on a network provider: refused before anything is written.
        let network = TestEnvironment.temporaryDirectory() + "/network.yaml"
        try """
        name: network
        dataset: \(root)/sample-data/evals/calculator-questions.jsonl
        target:
          agent:
            provider: openai
        scorers:
          - contains
        """.write(toFile: network, atomically: true, encoding: .utf8)
        let bad = TestEnvironment.temporaryDirectory() + "/bad.yaml"
        try "name: [unclosed\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let report = try Self.client([
            TestEnvironment.binary, workspace, "1", "prompt v2", trace, suite, network, bad,
        ])
        #expect(report["writes"]?["eval_label"]?["read_only"] == .bool(false), "\(report.compactJSON)")
        #expect(report["writes"]?["trace_import"]?["read_only"] == .bool(false), "\(report.compactJSON)")
        #expect(report["label"]?["is_error"] == .bool(false), "\(report["label"]?.compactJSON ?? "")")
        #expect(report["label"]?["structured"]?["label"] == .string("prompt v2"))
        let runs = try #require(report["evals_list"]?["structured"]?["runs"]?.array)
        #expect(runs.first { $0["id"]?.int == 1 }?["label"] == .string("prompt v2"))
        // The import lands as `trace import` lands it; a file that is not there imports nothing,
        // and standard input (the protocol's channel) is refused as a bad argument.
        let imported = try #require(report["trace_import"])
        #expect(imported["is_error"] == .bool(false), "\(imported.compactJSON)")
        let added = try #require(imported["structured"]?["added"]?.int)
        #expect(added > 0 && imported["structured"]?["traces"]?.int == added)
        #expect(report["traces_list"]?["structured"]?["total"]?.int == Int64(before) + added)
        #expect(report["trace_import_missing"]?["is_error"] == .bool(true))
        #expect(report["trace_import_missing"]?["text"]?.string?.contains("nothing was imported") == true)
        #expect(
            report["trace_import_stdin"]?["code"]?.int == -32602, "\(report["trace_import_stdin"]?.compactJSON ?? "")")

        // A missing suite and a network provider are tool errors naming what is wrong; a limit out of
        // range is a bad argument.
        let missing = try #require(report["eval_run_missing"])
        #expect(missing["is_error"] == .bool(true), "\(missing.compactJSON)")
        #expect(missing["text"]?.string?.contains(suite + ".missing") == true, "\(missing.compactJSON)")
        #expect(missing["text"]?.string?.contains("no run was made") == true, "\(missing.compactJSON)")
        let refused = try #require(report["eval_run_network"])
        #expect(refused["is_error"] == .bool(true), "\(refused.compactJSON)")
        #expect(refused["text"]?.string?.contains("provider openai") == true, "\(refused.compactJSON)")
        let malformed = try #require(report["eval_run_bad_yaml"])
        #expect(malformed["is_error"] == .bool(true), "\(malformed.compactJSON)")
        #expect(malformed["text"]?.string?.contains(bad) == true, "\(malformed.compactJSON)")
        #expect(
            report["eval_run_bad_limit"]?["code"]?.int == -32602, "\(report["eval_run_bad_limit"]?.compactJSON ?? "")")
        var lines: [JSONValue] = [.string("eval label 1 'prompt v2'"), .string("trace import " + trace)]
        let ran = try #require(report["eval_run"])
        let evalList = try TestEnvironment.run(["eval", "list", "--json", "--workspace", workspace])
        try #require(evalList.status == 0, "\(evalList.error)")
        let listedRuns = try #require(try JSONValue.parse(evalList.output).array)
        switch backend {
        case .sqlite:
            // The run lands as `eval run` lands it: run 2 after the Inspect log's, 3 items answered
            // offline, its scorer's mean inside its interval, and `eval list` shows it.
            #expect(ran["is_error"] == .bool(false), "\(ran.compactJSON)")
            let result = try #require(ran["structured"])
            #expect(result["id"]?.int == 2 && result["status"] == .string("complete"), "\(result.compactJSON)")
            #expect(result["answered"]?.int == 3 && result["items"]?.int == 3, "\(result.compactJSON)")
            let scorer = try #require(result["scorers"]?.array?.first)
            #expect(scorer["scorer"] == .string("contains"), "\(scorer.compactJSON)")
            let (mean, lower, upper) = (
                scorer["estimate"]?.number ?? -1, scorer["lower"]?.number ?? 2, scorer["upper"]?.number ?? -1
            )
            #expect(0 <= lower && lower <= mean && mean <= upper && upper <= 1, "\(scorer.compactJSON)")
            let listedRun = try #require(listedRuns.first { $0["id"]?.int == 2 }, "\(evalList.output)")
            #expect(listedRun["suite"] == .string("agent-calculator-offline"), "\(listedRun.compactJSON)")
            #expect(listedRun["answered"]?.int == 3, "\(listedRun.compactJSON)")
            let shown = try TestEnvironment.run(["eval", "show", "2", "--json", "--workspace", workspace])
            let summary = try JSONValue.parse(shown.output)["summary"]?["scorers"]?.array?.first
            #expect(summary?["interval"]?["estimate"]?.number == mean, "\(shown.output.prefix(600))")
            #expect(summary?["interval"]?["lower"]?.number == lower, "\(shown.output.prefix(600))")
            lines.append(.string("eval run " + suite + " --limit 3 --new"))
        case .postgres:
            // Its runs are answered by workers: refused before a run is planned.
            #expect(ran["is_error"] == .bool(true), "\(ran.compactJSON)")
            #expect(ran["text"]?.string?.contains("eval worker") == true, "\(ran.compactJSON)")
            #expect(listedRuns.count == 1, "\(evalList.output)")
        }

        let listed = try TestEnvironment.run(["history", "--json", "--workspace", workspace])
        try #require(listed.status == 0, "\(listed.error)")
        let entries = try #require(try JSONValue.parse(listed.output).array)
        // Each write once, as a line that runs again: the failed and refused writes are not kept.
        #expect(entries.map { $0["source"] } == lines.map { _ in .string("mcp") }, "\(listed.output)")
        #expect(entries.map { $0["line"] } == lines, "\(listed.output)")
        #expect(entries.first?["ran_at"]?.string?.hasSuffix("Z") == true)
        // Kept apart from what people typed: the TUI's line recalls none of it.
        let typed = try TestEnvironment.run(["history", "--source", "tui", "--workspace", workspace])
        #expect(typed.status == 0 && typed.output.contains("no tui lines in the history"), "\(typed.output)")
        let shown = try TestEnvironment.run(["history", "--source", "mcp", "--workspace", workspace])
        #expect(shown.output.contains("  mcp   eval label 1 'prompt v2'"), "\(shown.output)")
    }
}
