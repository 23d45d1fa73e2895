import Foundation
import LoupeBase
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// `loupe workspace copy` and `workspace info` with the real binary and a real PostgreSQL
/// server: real traces into PostgreSQL and back into a file, the password never printed.
@Suite struct WorkspaceCopyBinaryTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../sample-data/traces").standardized.path

    @Test func tracesGoToPostgresAndBackAndThePasswordIsNeverPrinted() throws {
        let cluster = try PostgresCluster.shared
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        for sample in ["inspect-arith.eval", "openai-chat.jsonl", "swe-agent-v1.traj"] {
            let imported = try TestEnvironment.run([
                "trace", "import", Self.samples + "/" + sample, "--workspace", file,
            ])
            #expect(imported.status == 0, "\(imported.error)")
        }
        let database = try cluster.database("binary")
        let url = cluster.url(database, password: nil)
        let password = ["PGPASSWORD": PostgresCluster.password]

        let copied = try TestEnvironment.run(["workspace", "copy", file, url], environment: password)
        #expect(copied.status == 0, "\(copied.error)")
        #expect(copied.output.contains("copied \(file) → \(url)"))
        #expect(copied.output.contains(" spans "))
        // Empty tables are counted, not listed.
        #expect(copied.output.contains("empty in the source)") && !copied.output.contains(" sae_models "))
        let again = try TestEnvironment.run(["workspace", "copy", file, url, "--json"], environment: password)
        #expect(again.status == 0, "\(again.error)")
        let report = try JSONSerialization.jsonObject(with: Data(again.output.utf8)) as? [String: Any]
        let tables = try #require(report?["tables"] as? [[String: Any]])
        #expect(tables.allSatisfy { ($0["copied"] as? Int) == 0 })
        #expect(tables.contains { $0["table"] as? String == "spans" && ($0["already_there"] as? Int ?? 0) > 0 })

        // The password in the URL itself: shown nowhere.
        let withPassword = cluster.url(database, password: "p4ss-in-url")
        let info = try TestEnvironment.run([
            "workspace", "info", "--workspace", cluster.url(database),
        ])
        #expect(info.status == 0, "\(info.error)")
        #expect(info.output.contains("schema     v\(StoreTable.migrationIdentifiers.count)"))
        #expect(!info.output.contains(PostgresCluster.password) && !info.error.contains(PostgresCluster.password))
        let refused = try TestEnvironment.run(["workspace", "info", "--workspace", withPassword])
        #expect(refused.status != 0 && refused.error.contains("refused loupe's credentials"))
        #expect(!refused.error.contains("p4ss-in-url") && !refused.output.contains("p4ss-in-url"))

        // The traces read where they are, as they read in the file.
        let list = try TestEnvironment.run(["trace", "list", "--workspace", url], environment: password)
        let listedInFile = try TestEnvironment.run(["trace", "list", "--workspace", file])
        #expect(list.status == 0 && list.output == listedInFile.output, "\(list.error)")
        // A command for files only says so, and what does its job on the server.
        let vacuum = try TestEnvironment.run(["workspace", "vacuum", "--workspace", url], environment: password)
        #expect(vacuum.status != 0 && vacuum.error.contains("is for a workspace file"), "\(vacuum.error)")
        #expect(vacuum.error.contains("autovacuum") && !vacuum.error.contains(PostgresCluster.password))

        let back = directory + "/back.sqlite"
        let returned = try TestEnvironment.run(["workspace", "copy", url, back], environment: password)
        #expect(returned.status == 0, "\(returned.error)")
        let original = try TestEnvironment.run(["trace", "list", "--workspace", file])
        let roundTripped = try TestEnvironment.run(["trace", "list", "--workspace", back])
        #expect(roundTripped.status == 0 && roundTripped.output == original.output)
        #expect(original.output.split(separator: "\n").count > 3)
    }

    /// The trace commands on a URL print what they print on a file holding the same imports:
    /// imports (an Inspect log becoming an eval run), a second import changing nothing, prices,
    /// the list, a trace, a diff, sessions and the eval runs.
    @Test func theTraceCommandsReadAndWriteAPostgreSQLWorkspaceAsAFile() throws {
        let cluster = try PostgresCluster.shared
        let url = cluster.url(try cluster.database("tracecommands"))
        let file = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let files = ["otlp-genai.jsonl", "inspect-arith.eval", "swe-agent-v1.traj", "openai-chat.jsonl"].map {
            Self.samples + "/" + $0
        }
        let steps: [[String]] = [
            ["trace", "import"] + files, ["trace", "import", files[0]],
            ["prices", "set", "gpt-4o-mini", "--input", "0.15", "--output", "0.6"], ["trace", "list"],
            ["trace", "show", "1"], ["trace", "diff", "1", "2"], ["session", "list"], ["eval", "list"],
            ["trace", "export", "4", "--format", "openai"],
        ]
        for step in steps {
            let onFile = try TestEnvironment.run(step + ["--workspace", file])
            let onServer = try TestEnvironment.run(step + ["--workspace", url])
            #expect(onFile.status == 0 && onServer.status == 0, "\(step): \(onFile.error) \(onServer.error)")
            // Only the eval run's start time may differ: the two were made a moment apart.
            let minutes = /\d{4}-\d\d-\d\d \d\d:\d\d/
            #expect(
                onServer.output.replacing(minutes, with: "…") == onFile.output.replacing(minutes, with: "…"),
                "\(step)")
            #expect(!onServer.output.contains(PostgresCluster.password))
        }
    }

    /// A fresh database on the tests' server and a file in a scratch directory, to run the same
    /// commands on.
    private struct Both {
        let url: String
        /// The URL as output shows it (no password).
        let shownURL: String
        let directory = TestEnvironment.temporaryDirectory()
        var file: String { directory + "/w.sqlite" }

        init(_ label: String) throws {
            let cluster = try PostgresCluster.shared
            let database = try cluster.database(label)
            url = cluster.url(database)
            shownURL = cluster.url(database, password: nil)
        }

        /// Runs each step on the file and on the URL: both succeed, never print the password,
        /// and print the same once each workspace's name, durations ("in 0.4 s") and dates are
        /// taken out, except the steps in `differing`.
        func expectSameOutput(_ steps: [[String]], differing: [[String]] = []) throws {
            func steady(_ text: String, _ workspace: String) -> String {
                text.replacingOccurrences(of: workspace, with: "W")
                    .replacingOccurrences(of: #"in [0-9.]+ s"#, with: "in T s", options: .regularExpression)
                    .replacingOccurrences(of: #"\([0-9.]+ MB/s\)"#, with: "(R MB/s)", options: .regularExpression)
                    .replacingOccurrences(
                        of: #"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.]+Z?"#, with: "DATE", options: .regularExpression)
            }
            for step in steps {
                let onFile = try TestEnvironment.run(step + ["--workspace", file])
                let onServer = try TestEnvironment.run(step + ["--workspace", url])
                #expect(onFile.status == 0 && onServer.status == 0, "\(step): \(onFile.error) \(onServer.error)")
                if !differing.contains(step) {
                    #expect(steady(onServer.output, shownURL) == steady(onFile.output, file), "\(step)")
                }
                #expect(!onServer.output.contains(PostgresCluster.password))
            }
        }
    }

    /// The roofline commands on a URL print what they print on a file: Nsight Compute imports
    /// (one with its own peaks, one against the datasheet's A100), a re-import reusing its
    /// profile, the table and the CSV export; then kernels measured here, placed there.
    @Test func theRooflineCommandsWorkOnAPostgreSQLWorkspaceAsOnAFile() throws {
        let both = try Both("roofline")
        let url = both.url
        let ncu = Self.samples + "/../ncu/"
        try both.expectSameOutput([
            ["roofline", "import-ncu", ncu + "h100-sgemm-raw.csv"],
            ["roofline", "import-ncu", ncu + "a100-sgemm-splitk-details.csv", "--gpu", "a100"],
            ["roofline", "import-ncu", ncu + "h100-sgemm-raw.csv"],
            ["roofline", "show", "--profile", "H100"], ["roofline", "show", "--profile", "A100"],
            ["roofline", "export", "--profile", "H100", "-o", "-"],
        ])
        // Kernels measured here are stored there and placed under this machine's roofs.
        let measured = try TestEnvironment.run([
            "kernels", "bench", "--kernel", "layernorm", "--shape", "64x384", "--seconds", "0.05", "--workspace", url,
        ])
        #expect(measured.status == 0, "\(measured.error)")
        let shown = try TestEnvironment.run(["roofline", "show", "--workspace", url])
        #expect(shown.status == 0 && shown.output.contains("layernorm"), "\(shown.output)\(shown.error)")
    }

    /// Ingest, judgments, search, saved queries and a retrieval eval on a URL print what they
    /// print on a file (durations and dates aside), MiniLM's embeddings included, and the saved
    /// query's hits can be reviewed there.
    @Test func theRetrievalCommandsWorkOnAPostgreSQLWorkspaceAsOnAFile() throws {
        let both = try Both("retrieval")
        let (url, directory) = (both.url, both.directory)
        let corpus = directory + "/c.jsonl"
        try RetrievalCommandTests.corpus.write(toFile: corpus, atomically: true, encoding: .utf8)
        let queries = directory + "/q.jsonl"
        try "{\"id\": \"q1\", \"text\": \"shock wave\"}\n{\"id\": \"q2\", \"text\": \"heat plate\"}\n".write(
            toFile: queries, atomically: true, encoding: .utf8)
        let qrels = directory + "/q.trec"
        try "q1 0 d3 2\nq2 0 d2 1\nq3 0 d1 1\n".write(toFile: qrels, atomically: true, encoding: .utf8)
        try both.expectSameOutput([
            ["ingest", corpus], ["ingest", corpus], ["qrels", "load", qrels, "--queries", queries],
            ["search", "shock wave on a boundary layer"], ["search", "heat plate", "--retriever", "bm25", "--json"],
            ["retrieval", "eval", "--queries", queries, "--retriever", "hybrid"], ["retrieval", "records"],
            ["retrieval", "show", "1"], ["retrieval", "compare", "1", "2"],
        ])
        // The saved query's hits become a review queue there.
        let rubric = Self.samples + "/../../rubrics/hit-relevance.yaml"
        let queue = try TestEnvironment.run([
            "review", "queue", "create", "hits", "--rubric", rubric, "--from", "hits record:1 k:3", "--as", "ana",
            "--workspace", url,
        ])
        #expect(queue.status == 0 && queue.output.contains("hits"), "\(queue.output)\(queue.error)")
    }

    /// Loupe's own agent runs on a URL as on a file: its tools search, read and query the corpus
    /// there, its run is recorded there as it happens, and a fork of it and the diff too; a hybrid
    /// search's forward pass is placed under the roofs there.
    @Test func theAgentAndItsForksWorkOnAPostgreSQLWorkspaceAsOnAFile() throws {
        let both = try Both("agent")
        let url = both.url
        let corpus = both.directory + "/corpus.jsonl"
        try AgentCommandTests.corpus.write(toFile: corpus, atomically: true, encoding: .utf8)
        // The list's durations are the runs' own.
        try both.expectSameOutput(
            [
                ["ingest", corpus, "--no-embed"],
                ["agent", "what similarity must aeroelastic models of heated aircraft keep?"],
                ["agent", "run", "How many documents are there?"],
                [
                    "trace", "fork", "1", "--at", "4", "--result",
                    "chunk 3 · document a3 · Shells\nBuckling of thin cylindrical shells under axial compression.",
                ],
                ["trace", "list"],
            ], differing: [["trace", "list"]])
        let diff = try TestEnvironment.run(["trace", "diff", "1", "3", "--workspace", url])
        #expect(diff.output.contains("3 same, 3 changed, 0 only in 1, 0 only in 3"), "\(diff.output)\(diff.error)")
        let listed = try TestEnvironment.run(["trace", "list", "--json", "--workspace", url])
        let traces = try #require(try JSONValue.parse(Data(listed.output.utf8)).array)
        #expect(traces.count == 3 && traces.allSatisfy { $0["format"] == "loupe" }, "\(listed.output)")
        // Once the corpus is embedded there, the agent's search is hybrid and records its query's
        // MiniLM forward pass, which the roofline places op by op under this machine's roofs.
        #expect(try TestEnvironment.run(["ingest", corpus, "--workspace", url]).status == 0)
        let hybrid = try TestEnvironment.run(["agent", "heated aircraft models?", "--workspace", url])
        #expect(hybrid.status == 0 && hybrid.output.contains("trace 4:"), "\(hybrid.output)\(hybrid.error)")
        let passes = try TestEnvironment.run(["roofline", "show", "--trace", "4", "--workspace", url])
        #expect(passes.status == 0 && passes.output.contains("operations"), "\(passes.output)\(passes.error)")
    }

    /// SAEs on a URL as on a file: MiniLM's layer 3 over Cranfield collected into shards there, a
    /// small TopK SAE trained with its checkpoints there, and its listing, curves, features, a
    /// feature's card (contexts read as slices of the shards), a label and a text run through it.
    /// Collection and training are deterministic, so all but their rates print the same.
    @Test func theSAECommandsWorkOnAPostgreSQLWorkspaceAsOnAFile() throws {
        let both = try Both("sae")
        let corpus = Self.samples + "/../cranfield/corpus.jsonl"
        try both.expectSameOutput(
            [
                ["ingest", corpus, "--no-embed"], ["sae", "collect", "--layer", "3", "--tokens", "1024"],
                ["sae", "train", "--layer", "3", "--width", "128", "--k", "8", "--steps", "30", "--batch", "128"],
                ["sae", "list"], ["sae", "show", "1"], ["sae", "features", "1", "--top", "6"],
                ["sae", "label", "1", "0", "first feature"], ["sae", "features", "1", "--top", "3", "--json"],
                ["sae", "feature", "1", "0", "--json"],
                ["sae", "activate", "1", "The boundary layer thickens behind the shock.", "--top", "2"],
            ],
            differing: [
                ["sae", "collect", "--layer", "3", "--tokens", "1024"],
                ["sae", "train", "--layer", "3", "--width", "128", "--k", "8", "--steps", "30", "--batch", "128"],
            ])
        // What training printed, but its rate, is the same too.
        let trained = try TestEnvironment.run(["sae", "train", "--resume", "1", "--workspace", both.url])
        #expect(trained.status == 0, "\(trained.error)")
        let onFile = try TestEnvironment.run(["sae", "train", "--resume", "1", "--workspace", both.file])
        func rateless(_ text: String) -> String {
            text.replacingOccurrences(of: #"[0-9]+ tokens/s"#, with: "N tokens/s", options: .regularExpression)
        }
        #expect(rateless(trained.output) == rateless(onFile.output) && trained.output.contains("step 30"))
        // The shards' data column is stored uncompressed, for slices.
        let store = try PostgresStore.open(try PostgresURL(both.url, environment: [:]))
        let storage = try store.execute(
            "SELECT attstorage::text AS s FROM pg_attribute WHERE attrelid = 'sae_activation_shards'::regclass "
                + "AND attname = 'data'")
        #expect(storage.first?.text("s") == "e", "\(storage)")
    }

    /// Profiles on a URL as on a file: Kineto imports (one rank, two ranks, a re-import that
    /// changes nothing), the list, where the time went, kernels, multiplies, a comparison and a
    /// delete.
    @Test func theProfileCommandsWorkOnAPostgreSQLWorkspaceAsOnAFile() throws {
        let both = try Both("profiles")
        let profiles = Self.samples + "/../profiles/"
        try both.expectSameOutput([
            ["profile", "import", profiles + "alexnet-a100"], ["profile", "import", profiles + "distributed-2rank"],
            ["profile", "import", profiles + "alexnet-a100"], ["profile", "list"], ["profile", "show", "1"],
            ["profile", "show", "2"], ["profile", "kernels", "1"], ["profile", "gemms", "1"],
            ["profile", "compare", "1", "2"], ["profile", "delete", "2"], ["profile", "list"],
        ])
    }

    /// `--since` copies the work made since a date: a trace imported since, and an older queue
    /// that gained a label since, whole, with the run its items are answers of and that run's
    /// traces; not the older traces nothing chosen refers to. Again, it changes nothing.
    @Test func sinceCopiesTheWorkMadeSinceWithWhatItRefersTo() throws {
        let cluster = try PostgresCluster.shared
        let url = cluster.url(try cluster.database("since"))
        let file = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let rubric = Self.samples + "/../../rubrics/answer-quality.yaml"
        func run(_ arguments: [String], on workspace: String) throws -> String {
            let ran = try TestEnvironment.run(arguments + ["--workspace", workspace])
            #expect(ran.status == 0, "\(arguments): \(ran.error)")
            return ran.output
        }
        _ = try run(["trace", "import", Self.samples + "/openai-agents.json"], on: file)
        _ = try run(["trace", "import", Self.samples + "/inspect-arith.eval"], on: file)
        _ = try run(
            [
                "review", "queue", "create", "arith", "--rubric", rubric, "--from", "answers run:1", "--annotators",
                "ana", "--as", "ana",
            ], on: file)
        _ = try run(
            [
                "review", "label", "arith", "--item", "run:1/q1/1", "--as", "ana", "correct=r", "grounded=g",
                "clarity=3",
            ],
            on: file)
        // All of it made in January.
        let workspace = try Workspace(path: file)
        try workspace.writeStatements { sql in
            for (table, column) in [
                ("traces", "imported_at"), ("eval_runs", "started_at"), ("eval_results", "finished_at"),
                ("review_queues", "created_at"), ("review_labels", "created_at"),
            ] {
                try sql.execute("UPDATE \(table) SET \(column) = '2026-01-10 12:00:00.000'")
            }
        }
        // Since February: a trace imported and a label given in the January queue.
        _ = try run(["trace", "import", Self.samples + "/swe-agent-v1.traj"], on: file)
        _ = try run(
            [
                "review", "label", "arith", "--item", "run:1/q2/1", "--as", "ana", "correct=w", "grounded=x",
                "clarity=2",
            ],
            on: file)

        let bad = try TestEnvironment.run(["workspace", "copy", file, url, "--since", "last tuesday"])
        #expect(bad.status != 0 && bad.error.contains("--since last tuesday: not a date"), "\(bad.error)")
        let text = try run(["workspace", "copy", file, url, "--since", "2026-02-01"], on: file)
        #expect(text.contains("the work made since 2026-02-01 00:00 UTC"), "\(text)")
        let copied = try JSONValue.parse(
            Data(try run(["workspace", "copy", file, url, "--since", "2026-02-01", "--json"], on: file).utf8))
        let tables = Dictionary(
            uniqueKeysWithValues: (copied["tables"]?.array ?? []).compactMap { table in
                table["table"]?.string.map { ($0, table) }
            })
        // The second copy found everything the first wrote, and nothing more.
        #expect(tables["traces"]?["already_there"] == .number(7), "\(tables["traces"] ?? .null)")
        #expect(tables["eval_runs"]?["already_there"] == .number(1))
        #expect(tables["review_labels"]?["already_there"] == .number(6))  // two labels of three criteria
        #expect(tables.values.allSatisfy { $0["copied"] == .number(0) })
        let listed = try run(["trace", "list"], on: url)
        #expect(listed.contains("swe-agent") && listed.contains("arith · q1 · epoch 1"), "\(listed)")
        #expect(!listed.contains("Support desk"), "\(listed)")
        let progress = try run(["review", "progress", "arith"], on: url)
        #expect(progress.contains("ana") && progress.contains("2/"), "\(progress)")
        // A date after everything copies nothing of the workspace's work.
        let none = try JSONValue.parse(
            Data(try run(["workspace", "copy", file, url, "--since", "0h", "--json"], on: file).utf8))
        #expect((none["tables"]?.array ?? []).allSatisfy { $0["rows"] == .number(0) })
    }

    /// The review loop on a URL prints what it prints on a file holding the same run: a queue
    /// made, two annotators' labels, an undo, progress, the export, the queue list and the
    /// judge's calibration. Which item comes next may differ: a queue shuffles the run's answers
    /// in the order the backend returns them, which on PostgreSQL is not the order of insertion.
    @Test func theReviewCommandsWorkOnAPostgreSQLWorkspaceAsOnAFile() throws {
        let cluster = try PostgresCluster.shared
        let database = try cluster.database("reviewcommands")
        let url = cluster.url(database)
        let file = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let rubric = Self.samples + "/../../rubrics/answer-quality.yaml"
        let label = ["review", "label", "arith", "--item", "run:1/q1/1"]
        let steps: [[String]] = [
            ["trace", "import", Self.samples + "/inspect-arith.eval"],
            [
                "review", "queue", "create", "arith", "--rubric", rubric, "--from", "answers run:1", "--annotators",
                "ana,ben", "--overlap", "2", "--as", "ana",
            ],
            label + ["--as", "ana", "correct=r", "grounded=g", "clarity=3"],
            label + ["--as", "ben", "correct=w", "grounded=g", "clarity=2"],
            ["review", "label", "arith", "--item", "run:1/q2/1", "--as", "ben", "correct=r", "grounded=x"],
            ["review", "undo", "arith", "--as", "ben"], ["review", "progress", "arith"],
            ["review", "export", "arith", "--format", "csv"], ["review", "queue", "list"],
            ["eval", "calibrate", "1", "--labels", "arith"],
        ]
        for step in steps {
            let onFile = try TestEnvironment.run(step + ["--workspace", file])
            let onServer = try TestEnvironment.run(step + ["--workspace", url])
            #expect(onFile.status == 0 && onServer.status == 0, "\(step): \(onFile.error) \(onServer.error)")
            // Labels carry the second they were given: the two were given a moment apart.
            let seconds = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/
            #expect(
                onServer.output.replacing(seconds, with: "…") == onFile.output.replacing(seconds, with: "…"),
                "\(step)")
        }
        // Next and skip work there too, on an item of the queue.
        let next = try TestEnvironment.run(["review", "next", "arith", "--as", "ben", "--workspace", url])
        #expect(next.status == 0 && next.output.contains("run:1/q"), "\(next.error)")
        let skipped = try TestEnvironment.run(["review", "skip", "arith", "--as", "ben", "--workspace", url])
        #expect(skipped.status == 0 && skipped.output.contains("ben skipped run:1/q"), "\(skipped.error)")
        let progress = try TestEnvironment.run(["review", "progress", "arith", "--workspace", url])
        #expect(progress.output.contains("(1 skipped)"), "\(progress.output)")

        // An answer and a trace become dataset items that link back to the database, named
        // without its password.
        let dataset = TestEnvironment.temporaryDirectory() + "/kept.jsonl"
        for from in ["answer:1/q1/1", "trace:1"] {
            let added = try TestEnvironment.run(["dataset", "add", dataset, "--from", from, "--workspace", url])
            #expect(added.status == 0 && added.output.contains("kept.jsonl:"), "\(from): \(added.error)")
        }
        let items = try String(contentsOfFile: dataset, encoding: .utf8).split(separator: "\n").map {
            try JSONValue.parse(Data($0.utf8))
        }
        #expect(items.count == 2)
        let named = cluster.url(database, password: nil)
        #expect(items.allSatisfy { $0["source"]?["workspace"]?.string == named }, "\(items)")
        #expect(items.first?["source"]?["run"] == .number(1) && items.last?["source"]?["trace"] == .number(1))
        #expect(!(try String(contentsOfFile: dataset, encoding: .utf8)).contains(PostgresCluster.password))
    }
}
