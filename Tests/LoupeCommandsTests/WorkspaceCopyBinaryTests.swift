import Foundation
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
        // Commands not yet on PostgreSQL say so, and how to work on a copy.
        let profiles = try TestEnvironment.run(["profile", "list", "--workspace", url], environment: password)
        #expect(profiles.status != 0 && profiles.error.contains("is a PostgreSQL workspace"), "\(profiles.error)")

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

    /// The review loop on a URL prints what it prints on a file holding the same run: a queue
    /// made, two annotators' labels, an undo, progress, the export, the queue list and the
    /// judge's calibration. Which item comes next may differ: a queue shuffles the run's answers
    /// in the order the backend returns them, which on PostgreSQL is not the order of insertion.
    @Test func theReviewCommandsWorkOnAPostgreSQLWorkspaceAsOnAFile() throws {
        let cluster = try PostgresCluster.shared
        let url = cluster.url(try cluster.database("reviewcommands"))
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
    }
}
