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
            [
                "review", "queue", "create", "arith", "--rubric", "rubrics/answer-quality.yaml", "--from",
                "answers run:1", "--annotators", "ana,ben", "--overlap", "2", "--as", "ana",
            ],
            // A small SAE (1) on MiniLM's layer 3 over the Cranfield chunks, for the SAE tools.
            ["sae", "collect", "--layer", "3", "--tokens", "512"],
            ["sae", "train", "--layer", "3", "--width", "64", "--k", "4", "--steps", "20", "--batch", "64"],
            // A smaller one (2) on SmolLM2's layer 15: its card names the tokens it promotes and suppresses.
            ["sae", "collect", "--model", "smollm2", "--layer", "15", "--tokens", "256"],
            [
                "sae", "train", "--model", "smollm2", "--layer", "15", "--width", "32", "--k", "4", "--steps", "5",
                "--batch", "32", "--fidelity-tokens", "30",
            ],
            ["profile", "import", "sample-data/profiles/alexnet-a100"],
            ["roofline", "import-ncu", "sample-data/ncu/h100-sgemm-raw.csv"],
        ]
        // Both people fail q3/1, which the judge passed (a disagreement); they split on q2/2 (a tie).
        let verdicts = [
            ("ana", "q1/1", "r"), ("ana", "q2/1", "r"), ("ana", "q3/1", "p"), ("ana", "q1/2", "r"),
            ("ana", "q2/2", "r"), ("ana", "q3/2", "w"), ("ben", "q1/1", "r"), ("ben", "q2/1", "r"),
            ("ben", "q3/1", "p"), ("ben", "q1/2", "r"), ("ben", "q2/2", "w"), ("ben", "q3/2", "w"),
        ]
        let labels = verdicts.map { annotator, item, correct in
            [
                "review", "label", "arith", "--as", annotator, "--item", "run:1/" + item, "correct=" + correct,
                "grounded=g", "clarity=4",
            ]
        }
        for line in lines + labels {
            guard
                let run = try? TestEnvironment.run(
                    line + ["--workspace", path], directory: TestEnvironment.repositoryRoot.path),
                run.status == 0
            else {
                // The SAE lines need MiniLM and SmolLM2: scripts/fetch-minilm and scripts/fetch-smollm2.
                return .failure(
                    CommandTestFailure(
                        "building the MCP test workspace failed at \(line): "
                            + ((try? TestEnvironment.run(line + ["--workspace", path]).error) ?? "")
                            + " (MiniLM: scripts/fetch-minilm; SmolLM2: scripts/fetch-smollm2)"))
            }
        }
        return .success(path)
    }()

    /// Runs scripts/reference/mcp_client.py and decodes its report.
    static func client(_ arguments: [String]) throws -> JSONValue {
        try PythonPeer.report("mcp_client.py", arguments)
    }

    /// What every transport must answer alike, checked against the CLI's own JSON.
    static func check(_ report: JSONValue, workspace: String) throws {
        let tools = try #require(report["tools"]?.object)
        #expect(
            Set(tools.keys)
                == [
                    "workspace_info", "traces_list", "trace_show", "trace_search", "trace_diff", "trace_tokens",
                    "sessions_list", "session_show", "evals_list", "eval_show", "eval_compare", "retrieval_search",
                    "retrieval_evaluate", "review_progress", "review_calibration", "review_disagreements",
                    "sae_feature", "sae_features_of_text", "profile_breakdown", "roofline_kernels",
                ])
        #expect(
            tools.values.allSatisfy { $0["read_only"] == .bool(true) && $0["schema"]?["type"] == .string("object") })
        let calls = try #require(report["calls"])
        let failing: Set = [
            "trace_show_missing", "session_show_missing", "retrieval_search_dense", "review_calibration_missing",
            "sae_feature_missing", "profile_breakdown_missing",
        ]
        for (name, call) in try #require(calls.object) where !failing.contains(name) {
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
        try checkSessionsAndRetrieval(calls, workspace: workspace)
        try checkSAEResourcesAndPrompts(report, workspace: workspace)
        // Protocol errors are JSON-RPC "invalid params", and the server goes on serving.
        for (name, error) in try #require(report["errors"]?.object) {
            #expect(error["code"]?.int == -32602, "\(name): \(error.compactJSON)")
        }
        #expect(report["errors"]?["unknown_tool"]?["message"]?.string?.contains("no_such_tool") == true)
        #expect(report["alive_after_errors"]?["traces"]?.int == Int64(traces.count))
    }

    /// trace_diff, the sessions and the retrieval tools against `loupe trace diff`, `loupe session list`
    /// and `loupe retrieval eval`.
    static func checkSessionsAndRetrieval(_ calls: JSONValue, workspace: String) throws {
        let diffed = try #require(calls["trace_diff"]?["structured"])
        let left = try #require(diffed["left"]?["id"]?.int)
        let right = try #require(diffed["right"]?["id"]?.int)
        let cliDiff = try JSONValue.parse(
            try TestEnvironment.run(["trace", "diff", "\(left)", "\(right)", "--json", "--workspace", workspace]).output
        )
        let cliRows = try #require(cliDiff["rows"]?.array)
        #expect(diffed["row_count"]?.int == Int64(cliRows.count))
        #expect(diffed["first_divergence"] == cliDiff["first_divergence"])
        let rows = try #require(diffed["rows"]?.array)
        #expect(rows.map { $0["change"] } == cliRows.prefix(3).map { $0["change"] })
        #expect((diffed["more"]?["from_row"]?.int).map { $0 == 3 } ?? (cliRows.count <= 3))
        let cliSessions = try #require(
            try JSONValue.parse(
                try TestEnvironment.run(["session", "list", "--json", "--workspace", workspace]).output
            ).array)
        #expect(calls["sessions_list"]?["structured"]?["total"]?.int == Int64(cliSessions.count))
        let shownSession = try #require(calls["session_show"]?["structured"])
        let first = try #require(cliSessions.first)
        #expect(shownSession["id"] == first["id"])
        #expect(shownSession["turns"]?.array?.compactMap { $0["id"]?.int } == first["turns"]?.array?.compactMap(\.int))
        #expect(calls["session_show_missing"]?["is_error"] == .bool(true))
        let hits = try #require(calls["retrieval_search"]?["structured"]?["hits"]?.array)
        #expect(hits.count == 5 && hits.allSatisfy { $0["bm25"]?["rank"]?.int != nil && $0["dense"] == .null })
        #expect(hits.map { $0["rank"]?.int } == (1...5).map { Int64($0) })
        #expect(calls["retrieval_search_dense"]?["is_error"] == .bool(true))
        #expect(calls["retrieval_search_dense"]?["text"]?.string?.contains("needs the corpus embedded") == true)
        let evaluation = try #require(calls["retrieval_evaluate"]?["structured"])
        let cliEvaluation = try JSONValue.parse(
            try TestEnvironment.run(
                [
                    "retrieval", "eval", "--queries", "sample-data/cranfield/queries.jsonl", "--retriever", "bm25",
                    "--stem",
                    "--json", "--workspace", workspace,
                ], directory: TestEnvironment.repositoryRoot.path
            ).output)
        #expect(evaluation["queries"]?.int == cliEvaluation["queries"]?.int)
        // The same per-query scores, averaged in another order: equal to the last bits of a double.
        let ndcg = try #require(evaluation["mean"]?["ndcg@10"]?.number)
        let map = try #require(evaluation["mean"]?["map"]?.number)
        #expect(abs(ndcg - (cliEvaluation["mean"]?["ndcg"]?["10"]?.number ?? 0)) < 1e-12)
        #expect(abs(map - (cliEvaluation["mean"]?["average_precision"]?.number ?? 0)) < 1e-12)
        #expect(evaluation["per_query"]?.array?.count == 5)
        try checkReview(calls, workspace: workspace)
    }

    /// The review tools against `loupe eval calibrate --json` on the queue the workspace labels.
    static func checkReview(_ calls: JSONValue, workspace: String) throws {
        let progress = try #require(calls["review_progress"]?["structured"])
        #expect(progress["items"]?.int == 6 && progress["labelled"]?.int == 6 && progress["shared"]?.int == 6)
        #expect(progress["annotators"]?.array?.compactMap { $0["name"]?.string } == ["ana", "ben"])
        #expect(calls["review_progress_all"]?["structured"]?["queues"]?.array?.count == 1)
        let cli = try JSONValue.parse(
            try TestEnvironment.run(["eval", "calibrate", "1", "--labels", "arith", "--json", "--workspace", workspace])
                .output)
        let calibration = try #require(calls["review_calibration"]?["structured"])
        for key in ["answers", "labelled", "ties", "krippendorff_alpha"] {
            #expect(calibration[key] == cli[key], "\(key)")
        }
        for key in ["n", "accuracy", "kappa", "kappa_lower", "kappa_upper", "confusion"] {
            #expect(calibration["judge_vs_people"]?[key] == cli["judge_vs_people"]?[key], "\(key)")
        }
        #expect(calibration["pass_rate"]?["ppi"] == cli["pass_rate"]?["ppi"])
        let disagreements = try #require(calls["review_disagreements"]?["structured"]?["disagreements"]?.array)
        let cliDisagreements = try #require(cli["disagreements"]?.array)
        #expect(disagreements.map { $0["item"] } == cliDisagreements.map { $0["item"] })
        #expect(disagreements.first?["item_id"] == .string("q3") && disagreements.first?["judge_pass"] == .bool(true))
        #expect(disagreements.first?["labels"]?["ana"] == .string("partly"))
        #expect(calls["review_calibration_missing"]?["is_error"] == .bool(true))
    }

    /// The SAE tools against `loupe sae feature --json`, then the resources and prompts.
    static func checkSAEResourcesAndPrompts(_ report: JSONValue, workspace: String) throws {
        let calls = try #require(report["calls"])
        let cli = try JSONValue.parse(
            try TestEnvironment.run(["sae", "feature", "1", "3", "--json", "--workspace", workspace]).output)
        let card = try #require(calls["sae_feature"]?["structured"])
        for key in ["feature", "density", "max_activation", "histogram", "neighbors"] {
            #expect(card[key] == cli[key], "\(key)")
        }
        #expect(card["groups"]?.array?.count == cli["groups"]?.array?.count)
        // A SmolLM2 SAE's card: the tokens its direction promotes and suppresses, as the CLI's.
        let languageCLI = try JSONValue.parse(
            try TestEnvironment.run(["sae", "feature", "2", "0", "--json", "--workspace", workspace]).output)
        let languageCard = try #require(calls["sae_feature_smollm2"]?["structured"])
        for key in ["promotes", "suppresses"] {
            #expect(languageCard[key]?.array?.count == 10, "\(key)")
            #expect(languageCard[key] == languageCLI[key], "\(key)")
        }
        let strongest = try #require(languageCLI["promotes"]?.array?.first)
        let line = try #require(calls["sae_feature_smollm2"]?["text"]?.string)
        #expect(
            line.contains(
                "promotes (the direction through SmolLM2's final norm and unembedding): "
                    + "\(try #require(strongest["name"]?.string).debugDescription) "
                    + String(format: "%.2f", try #require(strongest["cosine"]?.number))), "\(line)")
        #expect(calls["sae_feature_missing"]?["text"]?.string?.contains("SAE 1 has features 0…63") == true)
        let tokens = try #require(calls["sae_features_of_text"]?["structured"]?["tokens"]?.array)
        #expect(tokens.compactMap { $0["token"]?.string } == ["boundary", "layer", "heat", "transfer"])
        #expect(tokens.allSatisfy { ($0["features"]?.array?.count ?? 0) == 3 })
        #expect(
            report["resource_templates"]
                == .array(
                    ["loupe://eval/{run}", "loupe://feature/{sae}/{n}", "loupe://trace/{id}"].map(JSONValue.string)))
        let resources = try #require(report["resources"])
        let first = try #require(calls["traces_list"]?["structured"]?["traces"]?.array?.first?["id"])
        #expect(resources["trace"]?["json"]?["trace"]?["id"] == first)
        #expect(resources["trace"]?["mime"] == .string("application/json"))
        #expect(resources["eval"]?["json"]?["answers"]?.array?.count == 6, "every answer of run 1, failed or not")
        #expect(resources["feature"]?["json"]?["density"] == cli["density"])
        #expect(report["prompts"]?["triage_failed_answers"] == .array([.string("run")]))
        #expect(report["prompts"]?["explain_regression"] == .array([.string("a"), .string("b")]))
        #expect(report["prompt_texts"]?["triage"]?.string?.contains(#"eval_show {"id": 1}"#) == true)
        #expect(report["prompt_texts"]?["regression"]?.string?.contains(#"eval_compare {"a": 2, "b": 3}"#) == true)
        let profile = try JSONValue.parse(
            try TestEnvironment.run(["profile", "show", "1", "--top", "3", "--json", "--workspace", workspace]).output)
        let breakdown = try #require(calls["profile_breakdown"]?["structured"]?["ranks"]?.array?.first)
        #expect(breakdown["temporal"] == profile["ranks"]?.array?.first?["temporal"])
        #expect(breakdown["kernels"] == profile["ranks"]?.array?.first?["kernels"])
        #expect(calls["profile_breakdown_missing"]?["is_error"] == .bool(true))
        // Each kernel's share of its roof over the wire is `roofline export`'s (%.6g).
        let export = try TestEnvironment.run([
            "roofline", "export", "--profile", "H100", "--output", "-", "--workspace", workspace,
        ]).output
        var exported: [String: Double] = [:]
        for line in export.split(separator: "\n") {
            // Quoted fields (an import's shape, `launches 0,4`) hold commas.
            var fields = [""]
            var quoted = false
            for character in line {
                if character == "\"" {
                    quoted.toggle()
                } else if character == ",", !quoted {
                    fields.append("")
                } else {
                    fields[fields.count - 1].append(character)
                }
            }
            guard fields.first == "kernel", fields.count > 10, let fraction = Double(fields[10]) else { continue }
            exported[fields[1]] = fraction
        }
        let placed = try #require(calls["roofline_kernels"]?["structured"]?["kernels"]?.array)
        #expect(!placed.isEmpty && placed.count <= 2)
        for kernel in placed {
            let name = try #require(kernel["name"]?.string)
            let fraction = try #require(kernel["fraction_of_attainable"]?.number)
            let reference = try #require(exported[name], "\(name) not in roofline export")
            #expect(abs(fraction - reference) <= 1e-5 * reference, "\(name)")
        }
        let errors = try #require(report["resource_errors"])
        #expect(errors["missing_trace"]?["code"]?.int == -32002)
        #expect(errors["missing_run"]?["code"]?.int == -32002)
        #expect(errors["bad_uri"]?["code"]?.int == -32602)
        #expect(errors["bad_argument"]?["code"]?.int == -32602)
    }

    @Test func thePythonClientDrivesEveryToolOverStdio() throws {
        let workspace = try Self.workspace.get()
        try Self.check(try Self.client(["stdio", TestEnvironment.binary, workspace]), workspace: workspace)
    }

    @Test func thePythonClientDrivesEveryToolOverHTTPWithABearerToken() throws {
        let workspace = try Self.workspace.get()
        let server = try LoupeServer(["mcp", "--workspace", workspace, "--http", "127.0.0.1:0", "--token", "s3cret"])
        let url = try server.address(/(http:\/\/127\.0\.0\.1:[0-9]+\/mcp)/)
        try Self.check(try Self.client(["http", url, "s3cret"]), workspace: workspace)
        #expect(throws: CommandTestFailure.self) { try Self.client(["http", url, "wrong"]) }
        #expect(server.stop().status == 0)
    }

    /// A client that gives up on a long call and closes its connection leaves the HTTP server serving
    /// the clients after it, each of which initializes afresh (the stateless transport shares one
    /// server among them).
    @Test func aClientThatDropsMidCallLeavesTheHTTPServerServingTheNext() throws {
        let workspace = try Self.workspace.get()
        let server = try LoupeServer(
            ["mcp", "--workspace", workspace, "--http", "127.0.0.1:0", "--token", "s3cret"], errors: false)
        let (process, output) = (server.process, server.output)
        let url = try server.address(/(http:\/\/127\.0\.0\.1:[0-9]+\/mcp)/)
        for _ in 0..<2 {
            let report = try Self.client(["drop", "http", url, "s3cret"])
            #expect(report["dropped"] == .bool(true), "retrieval_evaluate answered within 50 ms: nothing was dropped")
            #expect(report["after"]?["structured"]?["eval_runs"]?.int == 3)
            #expect(report["evaluate_after"]?["structured"]?["queries"]?.int == 225)
        }
        // After a dropped request the SDK leaks that request's continuation (swift-sdk 0.12.1) and
        // a graceful shutdown would wait on it for ever: SIGTERM still stops the server, the wait
        // bounded by the command's grace period. 60 s here is a hang detector, not a timing claim.
        process.terminate()
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        #expect(!process.isRunning, "loupe mcp --http did not stop on SIGTERM after a client dropped mid-call")
        if !process.isRunning {
            #expect(process.terminationStatus == 0)
            let rest = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(rest.contains("stopped"), "\(rest)")
        }
    }

    /// The Python client gives up on a long call, which sends notifications/cancelled: the same
    /// stdio session's next calls must still be answered.
    @Test func aCancelledStdioCallLeavesTheSessionAnsweringTheNext() throws {
        let workspace = try Self.workspace.get()
        let report = try Self.client(["cancel", "stdio", TestEnvironment.binary, workspace])
        #expect(report["cancelled"] == .bool(true), "retrieval_evaluate answered within 50 ms: nothing was cancelled")
        #expect(report["after"]?["structured"]?["eval_runs"]?.int == 3)
        #expect(report["evaluate_after"]?["structured"]?["queries"]?.int == 225)
    }

    /// A host that quits closes the server's standard input, often while a call runs. The Python
    /// client's `stdio_client` kills the server on exit, which would hide a hang, so this test speaks
    /// the protocol's newline-delimited JSON-RPC itself and watches the process.
    @Test func closingStandardInputMidCallStopsTheStdioServer() throws {
        let workspace = try Self.workspace.get()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
        process.arguments = ["mcp", "--workspace", workspace]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }
        send(
            #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","#
                + #""capabilities":{},"clientInfo":{"name":"peer-test","version":"1"}}}"#)
        let initialized = TestEnvironment.firstLine(of: output)
        #expect(initialized.contains(#""result""#), "\(initialized)")
        send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        // retrieval_evaluate over every judged query: the longest call, still running when input closes.
        send(
            #"{"jsonrpc":"2.0","id":2,"method":"tools/call","#
                + #""params":{"name":"retrieval_evaluate","arguments":{"limit":1}}}"#)
        try input.fileHandleForWriting.close()
        // 60 s is a hang detector, not a timing claim.
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        #expect(!process.isRunning, "loupe mcp did not stop when its standard input closed mid-call")
        if !process.isRunning { #expect(process.terminationStatus == 0) }
    }

    @Test func aNonLoopbackAddressNeedsAToken() throws {
        let workspace = try Self.workspace.get()
        let run = try TestEnvironment.run(["mcp", "--workspace", workspace, "--http", "0.0.0.0:0"])
        #expect(run.status != 0)
        #expect(run.error.contains("refusing to serve MCP on 0.0.0.0 without a token"))
    }
}
