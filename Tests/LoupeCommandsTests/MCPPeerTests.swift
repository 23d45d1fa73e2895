import Foundation
import LoupeBase
import Testing

/// `loupe mcp` driven by the official MCP Python SDK (`mcp` in scripts/python-peers.txt), over
/// stdio and over streamable HTTP, on a workspace built from sample-data: the traces of three
/// real exporters, the Inspect log (eval run 1) and Cranfield ranked by BM25 with and without
/// stemming (runs 2 and 3). scripts/reference/mcp_client.py calls every tool and makes the
/// protocol errors an agent can; its report is checked against `loupe … --json`.
@Suite(.serialized) struct MCPPeerTests {
    typealias CommandTestFailure = OTLPPeerTests.CommandTestFailure

    static let workspace: Result<String, CommandTestFailure> = {
        let path = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let lines: [[String]] = [
            ["workspace", "init"],
            [
                "trace", "import", "sample-data/traces/otlp-genai.jsonl", "sample-data/traces/openai-chat.jsonl",
                "sample-data/traces/inspect-arith.eval",
            ],
            ["ingest", "sample-data/cranfield/corpus.jsonl", "--no-embed"],
            ["qrels", "load", "sample-data/cranfield/qrels.trec", "--queries", "sample-data/cranfield/queries.jsonl"],
            ["eval", "run", "sample-data/evals/cranfield-bm25.yaml"],
            ["eval", "run", "sample-data/evals/cranfield-bm25-stem.yaml"],
        ]
        for line in lines {
            guard
                let run = try? TestEnvironment.run(
                    line + ["--workspace", path], directory: TestEnvironment.repositoryRoot.path),
                run.status == 0
            else { return .failure(CommandTestFailure("building the MCP test workspace failed at \(line)")) }
        }
        return .success(path)
    }()

    /// Runs scripts/reference/mcp_client.py and decodes its report.
    static func client(_ arguments: [String]) throws -> JSONValue {
        let python = OTLPPeerTests.python
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw CommandTestFailure("the Python peers are missing: run scripts/python-peers first")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [TestEnvironment.repositoryRoot.appendingPathComponent("scripts/reference/mcp_client.py").path] + arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CommandTestFailure(
                "mcp_client.py \(arguments.first ?? "") failed (\(process.terminationStatus)): "
                    + String(decoding: err, as: UTF8.self).suffix(2000))
        }
        return try JSONValue.parse(out)
    }

    /// What every transport must answer alike, checked against the CLI's own JSON.
    static func check(_ report: JSONValue, workspace: String) throws {
        let tools = try #require(report["tools"]?.object)
        #expect(
            Set(tools.keys)
                == [
                    "workspace_info", "traces_list", "trace_show", "trace_search", "evals_list", "eval_show",
                    "eval_compare",
                ])
        #expect(
            tools.values.allSatisfy { $0["read_only"] == .bool(true) && $0["schema"]?["type"] == .string("object") })
        let calls = try #require(report["calls"])
        for (name, call) in try #require(calls.object) where name != "trace_show_missing" {
            #expect(call["is_error"] == .bool(false), "\(name): \(call["text"]?.string ?? "")")
        }
        // Totals against `loupe trace list --json` and `loupe eval … --json`.
        let traceList = try JSONValue.parse(
            try TestEnvironment.run(["trace", "list", "--json", "--workspace", workspace]).output)
        let traces = try #require(traceList.array)
        #expect(calls["traces_list"]?["structured"]?["total"]?.int == Int64(traces.count))
        let listed =
            (calls["traces_list"]?["structured"]?["traces"]?.array ?? [])
            + (calls["traces_list_page2"]?["structured"]?["traces"]?.array ?? [])
        #expect(Set(listed.compactMap { $0["id"]?.int }).count == 10, "two pages of 5 traces, none twice")
        let erroring = traces.filter { ($0["error_count"]?.int ?? 0) > 0 }.count
        #expect(calls["traces_list_errors"]?["structured"]?["total"]?.int == Int64(erroring))
        #expect(calls["workspace_info"]?["structured"]?["traces_with_errors"]?.int == Int64(erroring))
        let shown = try #require(calls["trace_show"]?["structured"])
        #expect(shown["steps"]?.array?.count == 2)
        #expect(shown["more"]?["from_step"]?.int == 2)
        #expect(calls["trace_show_missing"]?["is_error"] == .bool(true))
        #expect(calls["trace_show_missing"]?["text"]?.string?.contains("no such trace") == true)
        let hits = try #require(calls["trace_search"]?["structured"]?["hits"]?.array)
        #expect(!hits.isEmpty)
        #expect(calls["trace_search"]?["text"]?.string?.contains("<untrusted-data>") == true)
        // eval_show's failed answers are those `loupe eval show --json` marks failed.
        let answers = try #require(calls["eval_show"]?["structured"]?["answers"]?.array)
        #expect(!answers.isEmpty && answers.allSatisfy { $0["failed"] == .bool(true) })
        #expect(calls["eval_show"]?["structured"]?["failed"]?.int == Int64(answers.count))
        let compared = try JSONValue.parse(
            try TestEnvironment.run(["eval", "compare", "2", "3", "--json", "--workspace", workspace]).output)
        let cliMetrics = try #require(compared["metrics"]?.array)
        let mcpMetrics = try #require(calls["eval_compare"]?["structured"]?["metrics"]?.array)
        #expect(cliMetrics.map { $0["scorer"] } == mcpMetrics.map { $0["scorer"] })
        #expect(cliMetrics.map { $0["p_bh"]?.number } == mcpMetrics.map { $0["p_bh"]?.number })
        // Protocol errors are JSON-RPC "invalid params", and the server goes on serving.
        for (name, error) in try #require(report["errors"]?.object) {
            #expect(error["code"]?.int == -32602, "\(name): \(error.compactJSON)")
        }
        #expect(report["errors"]?["unknown_tool"]?["message"]?.string?.contains("no_such_tool") == true)
        #expect(report["alive_after_errors"]?["traces"]?.int == Int64(traces.count))
    }

    @Test func thePythonClientDrivesEveryToolOverStdio() throws {
        let workspace = try Self.workspace.get()
        try Self.check(try Self.client(["stdio", TestEnvironment.binary, workspace]), workspace: workspace)
    }

    @Test func thePythonClientDrivesEveryToolOverHTTPWithABearerToken() throws {
        let workspace = try Self.workspace.get()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
        process.arguments = ["mcp", "--workspace", workspace, "--http", "127.0.0.1:0", "--token", "s3cret"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        var line = Data()
        while !line.contains(0x0A) {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        let url = try #require(
            text.firstRange(of: /http:\/\/127\.0\.0\.1:[0-9]+\/mcp/).map { String(text[$0]) }, "\(text)")
        try Self.check(try Self.client(["http", url, "s3cret"]), workspace: workspace)
        #expect(throws: CommandTestFailure.self) { try Self.client(["http", url, "wrong"]) }
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
    }

    @Test func aNonLoopbackAddressNeedsAToken() throws {
        let workspace = try Self.workspace.get()
        let run = try TestEnvironment.run(["mcp", "--workspace", workspace, "--http", "0.0.0.0:0"])
        #expect(run.status != 0)
        #expect(run.error.contains("refusing to serve MCP on 0.0.0.0 without a token"))
    }
}
