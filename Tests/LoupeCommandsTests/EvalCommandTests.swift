import Foundation
import GRDB
import LoupeAgents
import LoupeBase
import Testing

/// `loupe eval …` end to end through the real binary on a real workspace: a BM25 retrieval suite
/// with judgments, resume after a kill, re-running failed items, comparison, export, Inspect logs
/// as runs, and a model target with an LLM judge served by a local chat-completions server.
@Suite(.serialized) struct EvalCommandTests {
    static let corpus = """
        {"id": "d1", "title": "Heated wings", "text": "Aeroelastic models of heated high speed aircraft must keep the thermal similarity parameters."}
        {"id": "d2", "title": "Boundary layers", "text": "Heat transfer in the laminar boundary layer of a flat plate."}
        {"id": "d3", "title": "Shells", "text": "Buckling of thin cylindrical shells under axial compression."}
        {"id": "d4", "title": "Flutter", "text": "Panel flutter of heated plates at supersonic speed."}

        """
    static let queries = """
        {"id": "1", "text": "heated aircraft models"}
        {"id": "2", "text": "boundary layer heat transfer"}
        {"id": "3", "text": "buckling of shells"}
        {"id": "4", "text": "rotor noise"}

        """
    static let qrels = "1 0 d1 2\n1 0 d4 1\n2 0 d2 2\n3 0 d3 2\n4 0 d4 1\n"

    static func suite(_ name: String, retriever: String = "bm25", extra: String = "") -> String {
        """
        name: \(name)
        dataset: {path: queries.jsonl, input: text}
        target:
          retrieval: {retriever: \(retriever), k: 3, qrels: qrels.trec\(extra)}
        scorers: [ndcg@10, map, mrr, recall@100]
        """
    }

    private func workspace() throws -> (file: String, directory: String) {
        let directory = TestEnvironment.temporaryDirectory()
        try Self.corpus.write(toFile: directory + "/corpus.jsonl", atomically: true, encoding: .utf8)
        try Self.queries.write(toFile: directory + "/queries.jsonl", atomically: true, encoding: .utf8)
        try Self.qrels.write(toFile: directory + "/qrels.trec", atomically: true, encoding: .utf8)
        try Self.suite("tiny-bm25").write(toFile: directory + "/bm25.yaml", atomically: true, encoding: .utf8)
        let file = directory + "/w.sqlite"
        let result = try TestEnvironment.run(["--workspace", file, "ingest", directory + "/corpus.jsonl", "--no-embed"])
        #expect(result.status == 0, "\(result.error)")
        return (file, directory)
    }

    private func loupe(_ file: String, _ arguments: [String]) throws -> String {
        let result = try TestEnvironment.run(["--workspace", file] + arguments)
        #expect(result.status == 0, "\(arguments): \(result.error)")
        return result.output
    }

    @Test func aRetrievalSuiteIsScoredPerQueryAgainstItsJudgments() throws {
        let (file, directory) = try workspace()
        let output = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        #expect(output.contains("run 1 complete: 4 answers made"))
        let shown = try JSONValue.parse(Data(try loupe(file, ["eval", "show", "1", "--json"]).utf8))
        let results = try #require(shown["results"]?.array)
        #expect(results.count == 4)
        // Query 4 ("rotor noise") shares no term with its one relevant document: every metric is 0.
        let miss = try #require(results.first { $0["item_id"] == "4" })
        #expect(miss["scores"]?["ndcg@10"]?["value"] == .number(0))
        let hit = try #require(results.first { $0["item_id"] == "3" })
        #expect(hit["scores"]?["mrr"]?["value"] == .number(1))
        #expect(hit["retrieval_record_id"]?.int != nil)
        // Provenance: hashes, target configuration, version.
        let run = try #require(shown["run"])
        #expect(run["suite_hash"]?.string?.count == 64 && run["dataset_hash"]?.string?.count == 64)
        #expect(run["target"]?["retriever"] == "bm25" && run["loupe_version"] == "0.1.0")
        // The mean over queries with its Student-t interval.
        let ndcg = try #require(shown["summary"]?["scorers"]?.array?.first)
        let values = results.map { $0["scores"]!["ndcg@10"]!["value"]!.number! }
        #expect(abs(ndcg["interval"]!["estimate"]!.number! - values.reduce(0, +) / 4) < 1e-12)
        #expect(ndcg["interval"]?["method"] == "t")
        // The retrieval record the answer links to holds the ranking.
        let records = try loupe(file, ["retrieval", "records"])
        #expect(records.contains("buckling of shells"))
    }

    @Test func aKilledRunResumesWithoutScoringAnythingTwice() throws {
        let (file, directory) = try workspace()
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        // What a kill after two answers leaves: each answer is its own transaction, the run still
        // says running.
        let queue = try DatabaseQueue(path: file)
        try queue.write { db in
            try db.execute(sql: "DELETE FROM eval_results WHERE run_id = 1 AND item_id IN ('3', '4')")
            try db.execute(sql: "UPDATE eval_runs SET status = 'running', ended_at = NULL WHERE id = 1")
        }
        let output = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        #expect(output.contains("run 1 complete (resumed: 2 answers were already there): 2 answers made"))
        let counts = try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM eval_scores WHERE run_id = 1")!
        }
        #expect(counts == 4 * 4)
        // A finished run is not resumed: the next call starts run 2; --new always does.
        #expect(try loupe(file, ["eval", "run", directory + "/bm25.yaml"]).contains("run 2 complete: 4 answers made"))
        try queue.write { db in try db.execute(sql: "UPDATE eval_runs SET status = 'cancelled' WHERE id = 2") }
        #expect(try loupe(file, ["eval", "run", directory + "/bm25.yaml", "--new"]).contains("run 3 complete"))
    }

    /// An answer whose stored targets were damaged by hand (a raw `UPDATE`) is named by `eval show`
    /// with its run, item and column; the other answers list as before.
    @Test func anUnreadableAnswerIsNamedByShow() throws {
        let (file, directory) = try workspace()
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        let before = try loupe(file, ["eval", "show", "1"])
        #expect(!before.contains("unreadable"))
        let queue = try DatabaseQueue(path: file)
        try queue.write { db in
            try db.execute(sql: "UPDATE eval_results SET targets_json = '[\"d3\"' WHERE run_id = 1 AND item_id = '3'")
        }
        let shown = try loupe(file, ["eval", "show", "1"])
        let warnings = shown.split(separator: "\n").filter { $0.hasPrefix("⚠ ") }
        #expect(warnings.count == 1)
        #expect(
            warnings.first?.hasPrefix("⚠ unreadable targets (run 1, item 3 epoch 1, column targets_json): ") == true)
        #expect(shown.split(separator: "\n").filter { $0.hasPrefix("3         ") }.count == 1)
    }

    @Test func onlyFailedReRunsTheFailedItemsAndCarriesTheRest() throws {
        let (file, directory) = try workspace()
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        let output = try loupe(file, ["eval", "run", directory + "/bm25.yaml", "--only-failed", "1"])
        #expect(output.contains("run 2 complete (3 answers carried over from run 1): 1 answer made"))
        let shown = try loupe(file, ["eval", "show", "2", "--failed"])
        #expect(shown.contains("re-run of the failed answers of run 1"))
        // The answer table lists item 4 (nothing relevant found) and not item 3 (found).
        let rows = shown.split(separator: "\n").filter { $0.hasPrefix("4         ") || $0.hasPrefix("3         ") }
        #expect(rows.count == 1 && rows[0].hasPrefix("4 "))
        let bad = try TestEnvironment.run([
            "--workspace", file, "eval", "run", directory + "/bm25.yaml", "--only-failed", "9",
        ])
        #expect(bad.status != 0 && bad.error.contains("there is no run 9"))
    }

    @Test func twoRunsAreComparedItemByItem() throws {
        let (file, directory) = try workspace()
        try Self.suite("tiny-bm25-b0", extra: ", b: 0.0, k1: 0.5").write(
            toFile: directory + "/b0.yaml", atomically: true, encoding: .utf8)
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        _ = try loupe(file, ["eval", "run", directory + "/b0.yaml"])
        let compared = try JSONValue.parse(Data(try loupe(file, ["eval", "compare", "1", "2", "--json"]).utf8))
        let metrics = try #require(compared["metrics"]?.array)
        #expect(metrics.map { $0["scorer"]?.string } == ["ndcg@10", "map", "mrr", "recall@100"])
        #expect(metrics[0]["paired"]?["n"] == .number(4))
        #expect(compared["warnings"]?.array?.first?.string?.contains("different suites") == true)
        let text = try loupe(file, ["eval", "compare", "1", "2"])
        #expect(text.contains("run 2 (tiny-bm25-b0) vs baseline run 1 (tiny-bm25)"))
        #expect(text.contains("fixed (ndcg@10 up)") && text.contains("regressed (ndcg@10 down)"))
        let list = try loupe(file, ["eval", "list"])
        #expect(list.contains("tiny-bm25 ") && list.contains("tiny-bm25-b0") && list.contains("4/4"))
    }

    /// Two identical runs: the MDE is "—" with the reason in text, null with it in JSON. So is a t
    /// interval (collapsed onto its estimate); a pass/fail scorer's Tango interval keeps its width.
    @Test func identicalRunsHaveNoMinimumDetectableEffect() throws {
        let (file, directory) = try workspace()
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml", "--new"])
        let compared = try JSONValue.parse(Data(try loupe(file, ["eval", "compare", "1", "2", "--json"]).utf8))
        let metrics = try #require(compared["metrics"]?.array)
        let text = try loupe(file, ["eval", "compare", "1", "2"])
        for metric in metrics {
            #expect(metric["paired"]?["minimumDetectableEffect"] == .null, "\(metric)")
            #expect(metric["mde_undefined"]?.string?.hasPrefix("identical scores on every item") == true)
            #expect(metric["paired"]?["difference"]?["estimate"]?.number == 0, "\(metric)")
            let difference = try #require(metric["paired"]?["difference"])
            if difference["method"]?.string == "tango-score" {
                // Four items, none discordant: ±z² / (n + z²), no zero-width certainty, named as such.
                let z2 = 1.959_963_984_540_054 * 1.959_963_984_540_054
                #expect(metric["interval_undefined"] == .null, "\(metric)")
                #expect(abs((difference["upper"]?.number ?? 0) - z2 / (4 + z2)) < 1e-9, "\(metric)")
                #expect(difference["lower"]?.number == difference["upper"]?.number.map { -$0 }, "\(metric)")
                #expect(metric["paired"]?["mcnemar"]?["method"]?.string == "asymptotic", "\(metric)")
                #expect(text.contains("MDE —: identical scores on every item"), "\(text)")
            } else {
                // The t interval collapsed onto its estimate is no interval: null at both ends.
                #expect(metric["interval_undefined"]?.string?.hasPrefix("identical scores on every item") == true)
                #expect(difference["lower"] == .null && difference["upper"] == .null, "\(metric)")
                #expect(text.contains("CI and MDE —: identical scores on every item"), "\(text)")
            }
        }
        #expect(!text.contains("nan") && !text.contains("[+0.000, +0.000]"), "\(text)")
    }

    @Test func exportsAreCSVAndJSON() throws {
        let (file, directory) = try workspace()
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        let csv = try loupe(file, ["eval", "export", "1", "--format", "csv"])
        let lines = csv.split(separator: "\n")
        #expect(lines.count == 5)
        #expect(
            lines[0].hasPrefix(
                "item_id,epoch,input,targets,output,error,latency_ms,trace_id,retrieval_record_id,ndcg@10,ndcg@10_passed"
            ))
        let path = directory + "/run.json"
        #expect(try loupe(file, ["eval", "export", "1", "--format", "json", "-o", path]).contains("wrote run 1"))
        let json = try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(json["results"]?.array?.count == 4)
        // Both forms in one command (what the Evals panel's e runs), each by its file's ending,
        // and the message names both files.
        let both = try loupe(file, ["eval", "export", "1", "-o", directory + "/b.csv", "-o", directory + "/b.json"])
        #expect(both.contains("wrote run 1 as csv to \(directory)/b.csv and as json to \(directory)/b.json"), "\(both)")
        #expect(try String(contentsOfFile: directory + "/b.csv", encoding: .utf8).hasPrefix("item_id,epoch"))
        #expect(try JSONValue.parse(Data(contentsOf: URL(fileURLWithPath: directory + "/b.json")))["results"] != nil)
    }

    @Test func badSuitesAndDatasetsSayWhereTheyAreWrong() throws {
        let (file, directory) = try workspace()
        try
            "name: x\ndataset: queries.jsonl\ntarget: {retrieval: {qrels: qrels.trec, retriever: bm52}}\nscorers: [map]\n"
            .write(toFile: directory + "/bad.yaml", atomically: true, encoding: .utf8)
        let bad = try TestEnvironment.run(["--workspace", file, "eval", "run", directory + "/bad.yaml"])
        #expect(bad.status != 0)
        #expect(bad.error.contains("bad.yaml:3:52: retriever 'bm52': use bm25, dense or hybrid"), "\(bad.error)")
        try "{\"id\": \"1\", \"text\": \"a\"}\n{\"id\": \"2\" \"text\": \"b\"}\n".write(
            toFile: directory + "/broken.jsonl", atomically: true, encoding: .utf8)
        try Self.suite("broken").replacingOccurrences(of: "queries.jsonl", with: "broken.jsonl").write(
            toFile: directory + "/broken.yaml", atomically: true, encoding: .utf8)
        let broken = try TestEnvironment.run(["--workspace", file, "eval", "run", directory + "/broken.yaml"])
        #expect(broken.error.contains("broken.jsonl:2:"), "\(broken.error)")
        #expect(broken.error.contains("not valid JSON"))
        // Nothing was started.
        #expect(try loupe(file, ["eval", "list"]).contains("no eval runs yet"))
    }

    @Test func inspectLogsInTheWorkspaceAreRunsToo() throws {
        let (file, _) = try workspace()
        let log = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/traces/inspect-arith.eval").path
        _ = try loupe(file, ["trace", "import", log])
        let runs = try JSONValue.parse(Data(try loupe(file, ["eval", "list", "--json"]).utf8))
        let run = try #require(runs.array?.first)
        #expect(run["suite"] == "inspect:arith" && run["source"] == "inspect" && run["epochs"] == .number(2))
        #expect(run["answered"] == .number(6))
        let shown = try JSONValue.parse(Data(try loupe(file, ["eval", "show", "1", "--json"]).utf8))
        let results = try #require(shown["results"]?.array)
        #expect(results.allSatisfy { $0["trace_id"]?.int != nil })
        // The log's own scores (C/I) as pass/fail; two epochs: Wilson over the effective trials
        // (clustered by sample), pass@k.
        let match = try #require(shown["summary"]?["scorers"]?.array?.first)
        #expect(match["interval"]?["method"] == "wilson-clustered" && match["passAtK"]?.array?.count == 2)
        // Listing again does not import the log twice.
        _ = try loupe(file, ["eval", "list"])
        #expect(try JSONValue.parse(Data(try loupe(file, ["eval", "list", "--json"]).utf8)).array?.count == 1)
    }

    static func completion(_ text: String, id: Int, finishReason: String = "stop") -> LocalChatServer.Reply {
        let body: JSONValue = .object([
            "id": .string("chatcmpl-eval\(id)"), "object": "chat.completion", "created": .number(1_763_800_000),
            "model": "gpt-4o-mini-2024-07-18",
            "choices": .array([
                .object([
                    "index": .number(0), "finish_reason": .string(finishReason),
                    "message": .object(["role": "assistant", "content": .string(text)]),
                ])
            ]),
            "usage": .object([
                "prompt_tokens": .number(20), "completion_tokens": .number(5), "total_tokens": .number(25),
            ]),
        ])
        return LocalChatServer.Reply(status: 200, contentType: "application/json", body: Data(body.compactJSON.utf8))
    }

    @Test func aModelTargetIsJudgedByAModelAndBothAreKept() throws {
        let (file, directory) = try workspace()
        // Per item: the model's answer, then the judge's verdict. The server answers in arrival
        // order, so the suite runs one item at a time (two at once could swap the answers).
        let server = try LocalChatServer(replies: [
            Self.completion("Paris", id: 1), Self.completion("The answer matches.\nGRADE: C", id: 2),
            Self.completion("Lyon", id: 3), Self.completion("Wrong city.\nGRADE: I", id: 4),
        ])
        defer { server.stop() }
        try """
        {"id": "q1", "input": "Capital of France?", "target": "Paris", "confidence": 0.9}
        {"id": "q2", "input": "Largest city of France?", "target": "Paris", "confidence": 0.75}
        """.write(toFile: directory + "/qa.jsonl", atomically: true, encoding: .utf8)
        try """
        name: capitals
        dataset: qa.jsonl
        concurrency: 1
        target:
          model: {provider: openai, base_url: "\(server.baseURL)", model: gpt-4o-mini, stream: false, system: Answer in one word.}
        scorers:
          - exact
          - judge:
              base_url: "\(server.baseURL)"
              model: gpt-4o-mini
              stream: false
              prompt: "Question: {input}\\nReference: {target}\\nAnswer: {output}\\nEnd with GRADE: C or GRADE: I."
        """.write(toFile: directory + "/qa.yaml", atomically: true, encoding: .utf8)
        let output = try loupe(file, ["eval", "run", directory + "/qa.yaml"])
        #expect(output.contains("run 1 complete: 2 answers made"))
        let shown = try JSONValue.parse(Data(try loupe(file, ["eval", "show", "1", "--json"]).utf8))
        let results = try #require(shown["results"]?.array)
        #expect(results.map { $0["output"] } == ["Paris", "Lyon"])
        #expect(results.map { $0["scores"]?["judge"]?["passed"] } == [.bool(true), .bool(false)])
        #expect(results[1]["scores"]?["judge"]?["explanation"]?.string?.contains("GRADE: I") == true)
        // Each answer is a trace with the model call.
        let traceID = try #require(results[0]["trace_id"]?.int)
        #expect(try loupe(file, ["trace", "show", String(traceID)]).contains("gpt-4o-mini"))
        // The judge saw the filled-in prompt; its prompt and raw verdict are stored with the score.
        let judged = try JSONValue.parse(server.requests[1].body)
        #expect(judged["messages"]?.array?.first?["content"]?.string?.contains("Answer: Paris") == true)
        let queue = try DatabaseQueue(path: file)
        let details = try queue.read { db in
            try String.fetchOne(
                db, sql: "SELECT details_json FROM eval_scores WHERE scorer = 'judge' AND item_id = 'q2'")
        }
        let stored = try JSONValue.parse(Data(try #require(details).utf8))
        #expect(stored["verdict"] == "Wrong city.\nGRADE: I" && stored["prompt"]?.string?.contains("Lyon") == true)
        // Items state a confidence: ECE, Brier and the reliability diagram (q1 right at 0.9, q2
        // wrong at 0.75: ECE = ½·0.1 + ½·0.75 = 0.425, Brier = ½·(0.01 + 0.5625) = 0.28625).
        let text = try loupe(file, ["eval", "show", "1"])
        #expect(text.contains("ECE 0.425  Brier 0.286"), "\(text)")
        #expect(text.contains("0.7–0.8  n    1  acc 0.00  conf 0.75") && text.contains("0.9–1.0  n    1  acc 1.00"))
        // The model call's system prompt went over the wire.
        let asked = try JSONValue.parse(server.requests[0].body)
        #expect(asked["messages"]?.array?.first?["content"] == "Answer in one word.")
    }

    /// An answer that stopped short says why: the agent's step limit for an empty answer, and a
    /// model's finish_reason `length` for a cut-off one, in `eval show` and in the stored result.
    @Test func anAnswerThatStoppedShortSaysWhy() throws {
        let (file, directory) = try workspace()
        let server = try LocalChatServer(replies: [
            Self.completion("The capital of France is", id: 1, finishReason: "length")
        ])
        defer { server.stop() }
        try #"{"id": "q0", "input": "what is 2 + 3?", "target": "5"}"#.write(
            toFile: directory + "/math.jsonl", atomically: true, encoding: .utf8)
        try """
        name: one-step
        dataset: math.jsonl
        target:
          agent: {provider: offline, max_steps: 1}
        scorers: [contains]
        """.write(toFile: directory + "/agent.yaml", atomically: true, encoding: .utf8)
        _ = try loupe(file, ["eval", "run", directory + "/agent.yaml"])
        // The offline agent's first step calls the calculator; with one step it never answers.
        let agent = try loupe(file, ["eval", "show", "1"])
        #expect(agent.contains("∅ step limit 1 reached"), "\(agent)")
        try #"{"id": "q1", "input": "Capital of France?", "target": "Paris"}"#.write(
            toFile: directory + "/qa.jsonl", atomically: true, encoding: .utf8)
        try """
        name: cut-off
        dataset: qa.jsonl
        target:
          model: {provider: openai, base_url: "\(server.baseURL)", model: gpt-4o-mini, stream: false, max_tokens: 5}
        scorers: [contains]
        """.write(toFile: directory + "/qa.yaml", atomically: true, encoding: .utf8)
        _ = try loupe(file, ["eval", "run", directory + "/qa.yaml"])
        let model = try loupe(file, ["eval", "show", "2"])
        #expect(model.contains("The capital of France is  [finish_reason length"), "\(model)")
        let queue = try DatabaseQueue(path: file)
        let metadata = try queue.read { db in
            try String.fetchAll(db, sql: "SELECT metadata_json FROM eval_results ORDER BY run_id")
        }
        let reasons = try metadata.map { try JSONValue.parse(Data($0.utf8))["loupe_stop_reason"] }
        #expect(reasons == ["step limit 1 reached", "finish_reason length: cut off at the token limit"])
    }

    /// A run keeps the corpus it searched; comparing runs over different corpora says so.
    @Test func aComparisonWarnsWhenTheRunsSearchedDifferentCorpora() throws {
        let (file, directory) = try workspace()
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        let shown = try loupe(file, ["eval", "show", "1"])
        #expect(
            shown.contains("searched corpus ") && shown.contains(" · 4 documents · 4 chunks (0 embedded)"), "\(shown)")
        // The same corpus: no warning about it.
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        #expect(!(try loupe(file, ["eval", "compare", "1", "2"])).contains("different corpora"))
        try #"{"id": "d5", "title": "Rotors", "text": "Rotor noise of helicopters in forward flight."}"#.write(
            toFile: directory + "/more.jsonl", atomically: true, encoding: .utf8)
        _ = try loupe(file, ["ingest", directory + "/more.jsonl", "--no-embed"])
        _ = try loupe(file, ["eval", "run", directory + "/bm25.yaml"])
        let compared = try loupe(file, ["eval", "compare", "1", "3"])
        #expect(compared.contains("warning: the runs searched different corpora: run 1 corpus "), "\(compared)")
        #expect(compared.contains("5 documents · 5 chunks (0 embedded) (a change may come from the data)"))
    }
}
