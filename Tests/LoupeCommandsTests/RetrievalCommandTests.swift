import Foundation
import GRDB
import LoupeBase
import LoupeRetrieval
import LoupeStore
import Testing

/// `ingest`, `search`, `qrels load` and `retrieval eval` through the real binary, MiniLM included.
@Suite(.serialized) struct RetrievalCommandTests {
    static let corpus = """
        {"id": "d1", "title": "Flutter of swept wings", "text": "Wind tunnel tests of flutter on swept wings at transonic speeds."}
        {"id": "d2", "title": "Heat transfer", "text": "Heat transfer in the laminar boundary layer of a flat plate."}
        {"id": "d3", "title": "Shock waves", "text": "Interaction of a shock wave with a turbulent boundary layer."}
        {"id": "d4", "title": "Buckling", "text": "Buckling of thin cylindrical shells under axial compression."}

        """

    private func write(_ text: String, _ name: String, in directory: String) -> String {
        let path = directory + "/" + name
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    /// A Markdown section longer than a chunk: every chunk of it is titled by its heading.
    @Test func markdownChunksAreTitledByTheirSection() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let filler = (0..<60).map { "Shells buckle under axial load number \($0)." }.joined(separator: " ")
        let file = write(
            "# Structures\n\nIntro.\n\n## Thin shells\n\n\(filler)\n\n\(filler) Flutter margin.\n\n## Plates\n\nFlat plates.\n",
            "structures.md", in: directory)
        let workspace = directory + "/w.sqlite"
        let ingested = try TestEnvironment.run(["--workspace", workspace, "ingest", file, "--no-embed"])
        #expect(ingested.status == 0, "\(ingested.error)")
        // "flutter" is only in the section's second chunk, which starts with no heading.
        let found = try TestEnvironment.run([
            "--workspace", workspace, "search", "flutter margin", "--retriever", "bm25", "--json",
        ])
        let hits = try #require(try JSONValue.parse(Data(found.output.utf8)).array)
        #expect(hits.first?["ordinal"] != .number(0) && hits.first?["section"] == "Thin shells", "\(found.output)")
        let shown = try TestEnvironment.run(["--workspace", workspace, "search", "flat plates", "--retriever", "bm25"])
        #expect(shown.output.contains("Plates · Structures"), "\(shown.output)")
    }

    @Test func ingestSkipsUnchangedFilesReplacesChangedOnesAndNamesBadInput() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let corpus = write(Self.corpus + "{broken\n", "c.jsonl", in: directory)
        _ = FileManager.default.createFile(atPath: directory + "/blob.txt", contents: Data([0x41, 0, 0x42]))
        _ = FileManager.default.createFile(atPath: directory + "/latin1.txt", contents: Data([0x63, 0x61, 0x66, 0xE9]))
        var result = try TestEnvironment.run(["--workspace", file, "ingest", directory, "--no-embed"])
        // What was skipped makes the ingest partial: status 2, and the count is the last line.
        #expect(result.status == 2)
        #expect(
            result.error.split(separator: "\n").last?.contains("skipped 1 malformed line and 2 unreadable files")
                == true)
        #expect(
            result.output.contains(
                "warning: \(corpus):5: not valid JSON (column 2: expected a member name in quotes), line skipped"))
        #expect(result.output.contains("blob.txt: binary file (NUL bytes), skipped"))
        #expect(result.output.contains("latin1.txt: not valid UTF-8, skipped"))
        #expect(result.output.contains("4 documents and 4 chunks stored"))
        result = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        #expect(result.output.contains("1 file: 1 unchanged, 0 documents"))
        // A changed file replaces its chunks; --strict refuses the bad line and keeps the old state.
        _ = write(Self.corpus.replacingOccurrences(of: "d4", with: "d5") + "{broken\n", "c.jsonl", in: directory)
        result = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed", "--strict"])
        #expect(result.status != 0)
        #expect(result.error.contains("c.jsonl:5: not valid JSON (column 2"))
        let workspace = try Workspace(path: file)
        #expect(try workspace.corpus.chunks().map(\.documentID) == ["d1", "d2", "d3", "d4"])
        result = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        #expect(try workspace.corpus.chunks().map(\.documentID) == ["d1", "d2", "d3", "d5"])
        #expect(try workspace.corpus.corpusCounts().documents == 4)
    }

    @Test func searchGivesEveryRetrieversRankAndIsSaved() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let corpus = write(Self.corpus, "c.jsonl", in: directory)
        #expect(try TestEnvironment.run(["--workspace", file, "ingest", corpus]).output.contains("4 chunks embedded"))
        let result = try TestEnvironment.run([
            "--workspace", file, "search", "shock boundary layer", "--k", "3", "--json",
        ])
        #expect(result.status == 0)
        struct Hit: Decodable {
            struct Placement: Decodable {
                var score: Double
                var rank: Int
            }
            var documentId: String
            var bm25: Placement?
            var dense: Placement?
            var fused: Placement
            var matchedTerms: [String]
            var startByte: Int
            var endByte: Int
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let hits = try decoder.decode([Hit].self, from: Data(result.output.utf8))
        #expect(hits.count == 3)
        #expect(hits[0].documentId == "d3")
        #expect(hits[0].bm25?.rank == 1 && hits[0].dense?.rank == 1)
        #expect(hits[0].matchedTerms == ["shock", "boundary", "layer"])
        #expect(hits.map(\.fused.rank) == [1, 2, 3])
        #expect(hits[0].startByte == 0 && hits[0].endByte > 40)
        let workspace = try Workspace(path: file)
        let saved = try workspace.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM retrieval_records") }
        #expect(saved == 1)
        // The saved run reopens as it was, and two runs compare chunk by chunk.
        let shown = try TestEnvironment.run(["--workspace", file, "retrieval", "show", "1", "--json"])
        #expect(
            try decoder.decode([Hit].self, from: Data(shown.output.utf8)).map(\.documentId) == hits.map(\.documentId))
        _ = try TestEnvironment.run([
            "--workspace", file, "search", "shock boundary layer", "--k", "3", "--retriever", "bm25",
        ])
        let listed = try TestEnvironment.run(["--workspace", file, "retrieval", "records"])
        #expect(
            listed.output.contains("    2  ") && listed.output.contains("bm25")
                && listed.output.contains("shock boundary layer"))
        let compared = try TestEnvironment.run(["--workspace", file, "retrieval", "compare", "1", "2", "--json"])
        struct Comparison: Decodable {
            struct Row: Decodable {
                var documentId: String
                var rankA: Int?
                var rankB: Int?
            }
            var rows: [Row]
        }
        let rows = try decoder.decode(Comparison.self, from: Data(compared.output.utf8)).rows
        #expect(rows.first?.documentId == "d3" && rows.first?.rankA == 1 && rows.first?.rankB == 1)
        #expect(rows.filter { $0.rankA != nil }.map(\.rankA) == [1, 2, 3])
        let missing = try TestEnvironment.run(["--workspace", file, "retrieval", "show", "99"])
        #expect(missing.status != 0 && missing.error.contains("no retrieval record 99"))
        // A BLOB that does not read back is rebuilt, not trusted.
        try workspace.write { db in try db.execute(sql: "UPDATE retrieval_indexes SET data = x'00010203'") }
        let again = try TestEnvironment.run(["--workspace", file, "search", "shock", "--retriever", "bm25", "--k", "1"])
        #expect(again.status == 0)
        #expect(again.output.contains("d3#0"))
        // Dense through the HNSW graph (stored) and exactly agree on this tiny corpus.
        let approximate = try TestEnvironment.run([
            "--workspace", file, "search", "heat plate", "--retriever", "dense", "--k", "2",
        ])
        let exact = try TestEnvironment.run([
            "--workspace", file, "search", "heat plate", "--retriever", "dense", "--k", "2", "--exact",
        ])
        #expect(approximate.status == 0 && exact.status == 0)
        #expect(approximate.output.split(separator: "\n").dropLast() == exact.output.split(separator: "\n").dropLast())
        let graph = try workspace.read { db in
            try Int.fetchOne(db, sql: "SELECT length(data) FROM retrieval_indexes WHERE kind = 'hnsw'")
        }
        #expect((graph ?? 0) > 30)
        let size = try workspace.read { db in
            try Int.fetchOne(db, sql: "SELECT length(data) FROM retrieval_indexes WHERE kind = 'bm25'")
        }
        #expect((size ?? 0) > 4)
    }

    @Test func aChangedFileUpdatesTheStoredGraphInPlace() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let lines = Self.corpus.split(separator: "\n").map { String($0) + "\n" }
        _ = write(lines.prefix(3).joined(), "c.jsonl", in: directory)
        let shells = write(lines[3], "shells.jsonl", in: directory)
        #expect(try TestEnvironment.run(["--workspace", file, "ingest", directory]).status == 0)
        let query = ["--workspace", file, "search", "thin shells buckling", "--retriever", "dense", "--k", "4"]
        #expect(try TestEnvironment.run(query).status == 0)
        let workspace = try Workspace(path: file)
        func graph() throws -> HNSWIndex? {
            let data = try workspace.read { db in
                try Data.fetchOne(db, sql: "SELECT data FROM retrieval_indexes WHERE kind = 'hnsw'")
            }
            return data.flatMap { HNSWIndex(serialized: $0, dimensions: 384) }
        }
        let before = try #require(try graph())
        #expect(before.count == 4 && before.deletedCount == 0)
        // d4 becomes d5: its chunk is tombstoned and the new one inserted; the other nodes stay.
        _ = write(lines[3].replacingOccurrences(of: "d4", with: "d5"), "shells.jsonl", in: directory)
        #expect(try TestEnvironment.run(["--workspace", file, "ingest", shells]).status == 0)
        let approximate = try TestEnvironment.run(query)
        let exact = try TestEnvironment.run(query + ["--exact"])
        #expect(approximate.output.contains("d5#0") && !approximate.output.contains("d4#0"))
        #expect(approximate.output.split(separator: "\n").dropLast() == exact.output.split(separator: "\n").dropLast())
        let after = try #require(try graph())
        #expect(after.count == 5 && after.deleted == [false, false, false, true, false])
        #expect(after.labels.prefix(3) == before.labels.prefix(3))
        #expect(Array(after.vectors.prefix(3 * 384)) == Array(before.vectors.prefix(3 * 384)))
    }

    @Test func evalScoresTheRunAgainstLoadedQrels() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let corpus = write(Self.corpus, "c.jsonl", in: directory)
        _ = try TestEnvironment.run(["--workspace", file, "ingest", corpus, "--no-embed"])
        let queries = write(
            "{\"id\": \"q1\", \"text\": \"shock wave\"}\n{\"id\": \"q2\", \"text\": \"heat plate\"}\n", "q.jsonl",
            in: directory)
        let qrels = write("q1 0 d3 2\nq2 0 d4 1\nq3 0 d1 1\n", "q.trec", in: directory)
        let loaded = try TestEnvironment.run(["--workspace", file, "qrels", "load", qrels, "--queries", queries])
        #expect(loaded.output.contains("3 judgments for 3 queries"))
        #expect(loaded.output.contains("stored the texts of 2 queries"))
        let judged = try Workspace(path: file).corpus.judgedQueries()
        #expect(Set(judged.map(\.id)) == ["q1", "q2"] && judged.allSatisfy { $0.source == "q.trec" })
        let result = try TestEnvironment.run([
            "--workspace", file, "retrieval", "eval", "--queries", queries, "--retriever", "bm25", "--json",
        ])
        #expect(result.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as! [String: Any]
        let mean = object["mean"] as! [String: Any]
        // q1 finds d3 first (RR 1), q2 does not find d4 (RR 0): judged queries in the file are q1, q2.
        #expect(object["queries"] as? Int == 2)
        #expect(abs((mean["reciprocal_rank"] as! Double) - 0.5) < 1e-12)
        let bad = write("q1 0 d3\n", "bad.trec", in: directory)
        let failure = try TestEnvironment.run(["--workspace", file, "qrels", "load", bad])
        #expect(failure.error.contains("bad.trec:1: expected 'query iteration document relevance'"))
    }

    @Test func aKillDuringIngestLeavesThePreviousState() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let small = write(Self.corpus, "c.jsonl", in: directory)
        _ = try TestEnvironment.run(["--workspace", file, "ingest", small, "--no-embed"])
        // A large replacement of the same file, killed while it is being written.
        var big = ""
        for index in 0..<200_000 {
            big += "{\"id\": \"b\(index)\", \"text\": \"word \(index) of a long generated corpus\"}\n"
        }
        _ = write(big, "c.jsonl", in: directory)
        // Killed early (reading) and late (likely inside the write transaction).
        for delay in [1.0, 6.0] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
            process.arguments = ["--workspace", file, "ingest", small, "--no-embed"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            Thread.sleep(forTimeInterval: delay)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let count = try Workspace(path: file).corpus.corpusCounts().documents
            #expect(count == 4 || count == 200_000, "a partial ingest is visible: \(count) documents")
            #expect(
                try TestEnvironment.run(["--workspace", file, "workspace", "check"]).output.contains("integrity     ok")
            )
            if count == 200_000 { break }
        }
    }
}
