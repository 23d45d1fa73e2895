import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Synchronization
import Testing

/// The review tables, written once: every test runs on a SQLite workspace and on a real
/// PostgreSQL server.
@Suite struct ReviewTablesTests {
    typealias Backend = StoreBackend

    private func queue(_ name: String) -> ReviewQueueRecord {
        ReviewQueueRecord(
            name: name, rubricName: "answer-quality", rubricVersion: 1, rubricHash: "abc123", rubricJSON: "{}",
            rubricFile: "rubrics/answer-quality.yaml", target: "answer", mode: "single", source: "answers run:1",
            seed: 7, createdBy: "test")
    }

    private func items(_ count: Int) -> [ReviewItemRecord] {
        (0..<count).map {
            ReviewItemRecord(
                queueID: 0, position: $0, itemKey: "run:1/q\($0)/1", runID: 1, evalItemID: "q\($0)", epoch: 1,
                refJSON: "{\"kind\":\"answer\"}")
        }
    }

    private func label(_ queue: Int64, _ key: String, _ value: String, by annotator: String, criterion: String = "ok")
        -> ReviewLabelRecord
    {
        ReviewLabelRecord(
            queueID: queue, itemKey: key, criterion: criterion, value: value, number: value == "pass" ? 1 : 0,
            annotator: annotator, rubricVersion: 1, rubricHash: "abc123", origin: "review")
    }

    /// A queue keeps its items in order and its assignments (each pair once), and a second queue
    /// of the same name is refused with nothing of it kept.
    @Test(arguments: Backend.allCases) func aQueueReadsBackAsCreatedAndANameIsTakenOnce(_ backend: Backend) throws {
        let reviews = ReviewTables(try backend.database("review_queue"))
        let id = try reviews.createReviewQueue(
            queue("q"), items: items(3),
            assignments: [("run:1/q0/1", "ana"), ("run:1/q0/1", "ana"), ("run:1/q1/1", "bo")])
        let stored = try #require(try reviews.reviewQueue("q"))
        #expect(stored.id == id && stored.seed == 7 && stored.rubricFile == "rubrics/answer-quality.yaml")
        #expect(try reviews.reviewQueue(String(id)) == stored)
        #expect(stored.createdAt.timeIntervalSinceNow > -60)
        #expect(try reviews.reviewItems(queue: id).map(\.itemKey) == ["run:1/q0/1", "run:1/q1/1", "run:1/q2/1"])
        #expect(try reviews.reviewItems(queue: id).first?.evalItemID == "q0")
        #expect(try reviews.reviewAssignments(queue: id) == ["run:1/q0/1": ["ana"], "run:1/q1/1": ["bo"]])
        let error = try #require(throws: WorkspaceError.self) {
            try reviews.createReviewQueue(queue("q"), items: items(2), assignments: [])
        }
        #expect(error.code == .database, "\(error)")
        #expect(try reviews.reviewQueues().map(\.name) == ["q"])
        #expect(try reviews.reviewItems(queue: id).count == 3)
    }

    /// Labelling again replaces one's own label as the newest row (so undo takes it back), keeps
    /// another annotator's, and ends one's skip of the item; skips come back oldest first.
    @Test(arguments: Backend.allCases) func labelsReplaceUndoAndEndSkips(_ backend: Backend) throws {
        let reviews = ReviewTables(try backend.database("review_labels"))
        let id = try reviews.createReviewQueue(queue("q"), items: items(3), assignments: [])
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        try reviews.skipReviewItem(queue: id, itemKey: "run:1/q1/1", annotator: "ana", at: start)
        try reviews.skipReviewItem(queue: id, itemKey: "run:1/q0/1", annotator: "ana", at: start + 1)
        try reviews.skipReviewItem(queue: id, itemKey: "run:1/q2/1", annotator: "bo", at: start)
        #expect(try reviews.reviewSkips(queue: id, annotator: "ana") == ["run:1/q1/1", "run:1/q0/1"])
        // Skipping again moves the item to the end.
        try reviews.skipReviewItem(queue: id, itemKey: "run:1/q1/1", annotator: "ana", at: start + 2)
        #expect(try reviews.reviewSkips(queue: id, annotator: "ana") == ["run:1/q0/1", "run:1/q1/1"])

        try reviews.addReviewLabels([
            label(id, "run:1/q0/1", "pass", by: "ana"), label(id, "run:1/q1/1", "fail", by: "ana"),
            label(id, "run:1/q0/1", "fail", by: "bo"),
        ])
        #expect(try reviews.reviewSkips(queue: id, annotator: "ana").isEmpty)
        #expect(try reviews.reviewSkips(queue: id, annotator: "bo") == ["run:1/q2/1"])
        try reviews.addReviewLabels([label(id, "run:1/q0/1", "fail", by: "ana")])
        let labels = try reviews.reviewLabels(queue: id)
        #expect(
            labels.map { "\($0.annotator) \($0.itemKey) \($0.value)" } == [
                "ana run:1/q1/1 fail", "bo run:1/q0/1 fail", "ana run:1/q0/1 fail",
            ])
        #expect(labels.map(\.number) == [0, 0, 0])
        #expect(labels.allSatisfy { $0.createdAt.timeIntervalSinceNow > -60 })

        let undone = try #require(try reviews.undoLastReviewLabel(queue: id, annotator: "ana"))
        #expect(undone.itemKey == "run:1/q0/1" && undone.value == "fail")
        #expect(try reviews.reviewLabels(queue: id).map(\.itemKey) == ["run:1/q1/1", "run:1/q0/1"])
        #expect(try reviews.undoLastReviewLabel(queue: id, annotator: "ana")?.itemKey == "run:1/q1/1")
        #expect(try reviews.undoLastReviewLabel(queue: id, annotator: "ana") == nil)
        #expect(try reviews.reviewLabels(queue: id).map(\.annotator) == ["bo"])
    }

    /// Two annotators labelling one queue at once both keep every label.
    @Test(arguments: Backend.allCases) func twoAnnotatorsAtOnceBothKeepTheirs(_ backend: Backend) throws {
        let reviews = ReviewTables(try backend.database("review_race"))
        let id = try reviews.createReviewQueue(queue("q"), items: items(20), assignments: [])
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 2) { who in
            for item in 0..<20 {
                do {
                    try reviews.addReviewLabels([label(id, "run:1/q\(item)/1", "pass", by: who == 0 ? "ana" : "bo")])
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let labels = try reviews.reviewLabels(queue: id)
        #expect(labels.count == 40)
        #expect(Set(labels.map { "\($0.annotator) \($0.itemKey)" }).count == 40)
    }
}
