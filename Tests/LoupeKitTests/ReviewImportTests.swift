import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import Testing

/// `review import` against what a line says: its `queue` field, and lines that replace a label.
@Suite struct ReviewImportTests {
    private static func file(_ lines: [String]) throws -> String {
        let directory = try KitFixtures.temporaryDirectory("review-import-lines")
        let path = directory + "/labels.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    private static func line(_ item: String, _ value: String, queue: String? = nil) -> String {
        (queue.map { #"{"queue": "\#($0)", "# } ?? "{")
            + #""item": "\#(item)", "criterion": "correct", "value": "\#(value)", "annotator": "ana"}"#
    }

    @Test func aLineForAnotherQueueIsRefusedNamingBothAndStoresNothing() throws {
        let (workspace, service, run) = try ReviewServiceTests.inspectRun()
        let target = try service.createQueue(ReviewServiceTests.request("target", from: "answers run:\(run)"))
        let key = try #require(try workspace.reviews.reviewItems(queue: target.id).first?.itemKey)
        let path = try Self.file([Self.line(key, "right", queue: "target"), Self.line(key, "wrong", queue: "other")])
        do {
            try service.importLabels(target, file: path)
            Issue.record("a label of queue other was imported into target")
        } catch let error as SuiteError {
            #expect(error.location.line == 2)
            #expect(error.message.contains("for queue other, not target") && error.message.contains("--from-queue"))
        }
        #expect(try workspace.reviews.reviewLabels(queue: target.id).isEmpty)
        // Asked for by name, the other queue's lines are taken.
        #expect(try service.importLabels(target, file: path, from: "other").labels == 1)
    }

    @Test func aLineThatReplacesAnotherIsCountedAsReplaced() throws {
        let (workspace, service, run) = try ReviewServiceTests.inspectRun()
        let queue = try service.createQueue(ReviewServiceTests.request("twice", from: "answers run:\(run)"))
        let keys = try workspace.reviews.reviewItems(queue: queue.id).map(\.itemKey)
        let path = try Self.file([Self.line(keys[0], "right"), Self.line(keys[0], "wrong")])
        #expect(try service.importLabels(queue, file: path) == .init(labels: 1, replaced: 1))
        let stored = try workspace.reviews.reviewLabels(queue: queue.id)
        #expect(stored.count == 1 && stored[0].value == "wrong")
        // Again: both lines now replace the label the queue holds.
        let again = try Self.file([Self.line(keys[0], "right"), Self.line(keys[1], "right")])
        #expect(try service.importLabels(queue, file: again) == .init(labels: 2, replaced: 1))
    }
}
