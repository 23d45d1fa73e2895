import Foundation
import LoupeKit
import LoupeStore
import Testing

/// Saved retrieval runs whose stored columns were damaged by hand (a raw `UPDATE` on a real
/// workspace holding the Cranfield collection): `retrieval show` and `compare`, and a review
/// queue drawn from a saved query, fail naming the record and column, and the records beside it
/// read as before.
@Suite struct RetrievalStoredValueTests {
    let workspace: Workspace
    let service: RetrievalService
    /// Two saved BM25 runs.
    let first: Int64
    let second: Int64

    init() throws {
        workspace = try KitFixtures.workspace("retrieval-stored")
        service = RetrievalService(workspace: workspace, models: KitFixtures.models)
        _ = try service.ingest([KitFixtures.path("sample-data/cranfield/corpus.jsonl")], embed: false)
        var options = RetrievalService.Options()
        options.retriever = .bm25
        first = try service.record(
            "transonic aileron buzz", options: options,
            hits: try service.search("transonic aileron buzz", options: options))
        second = try service.record(
            "heat transfer", options: options, hits: try service.search("heat transfer", options: options))
    }

    private func damage(_ column: String, of record: Int64, to text: String) throws {
        _ = try workspace.writeStatements { sql in
            try sql.execute("UPDATE retrieval_records SET \(column) = ? WHERE id = ?", [.text(text), .integer(record)])
        }
    }

    @Test func damagedHitsAreNamedAndTheOtherRecordStillReads() throws {
        let before = try service.records(id: second)
        try damage("hits_json", of: first, to: #"[{"rank": 1, "chunk_id": "#)
        let shown = #expect(throws: StoredValueError.self) { try service.records(id: first) }
        #expect(shown?.headline == "unreadable hits (retrieval record \(first), column hits_json)")
        #expect(shown?.reason.hasPrefix("line 1, column ") == true, "\(shown?.reason ?? "")")
        let compared = #expect(throws: StoredValueError.self) { try service.compare(first, second) }
        #expect(compared?.headline == shown?.headline)
        #expect(try service.records(id: second) == before)

        // A review queue drawn from that saved query names it as a saved query.
        let rubric = try KitFixtures.temporaryDirectory("rubric") + "/hits.yaml"
        try """
        name: hits
        targets: [hit]
        criteria:
          - {name: relevant, kind: boolean, true_key: y, false_key: o}
        """.write(toFile: rubric, atomically: true, encoding: .utf8)
        var request = ReviewServiceTests.request("hits", from: "hits record:\(first) k:5")
        request.rubricPath = rubric
        let queued = #expect(throws: StoredValueError.self) {
            try ReviewService(workspace: workspace).createQueue(request)
        }
        #expect(queued?.headline == "unreadable hits (saved query \(first), column hits_json)")
    }

    /// JSON of another shape names the field that does not fit.
    @Test func settingsOfAnotherShapeNameTheField() throws {
        try damage("params_json", of: second, to: #"{"k": 10}"#)
        let shown = #expect(throws: StoredValueError.self) { try service.records(id: second) }
        #expect(shown?.headline == "unreadable settings (retrieval record \(second), column params_json)")
        #expect(shown?.reason == "retriever is missing", "\(shown?.reason ?? "")")
        #expect(try service.records(id: first).first?.hits.isEmpty == false)
    }
}
