import Foundation

/// The review tables of a SQLite workspace: ``ReviewTables`` over this file.
extension Workspace {
    package var reviews: ReviewTables { ReviewTables(self) }

    package func createReviewQueue(
        _ queue: ReviewQueueRecord, items: [ReviewItemRecord], assignments: [(itemKey: String, annotator: String)]
    ) throws(WorkspaceError) -> Int64 {
        try reviews.createReviewQueue(queue, items: items, assignments: assignments)
    }

    package func reviewQueues() throws(WorkspaceError) -> [ReviewQueueRecord] { try reviews.reviewQueues() }

    package func reviewQueue(_ name: String) throws(WorkspaceError) -> ReviewQueueRecord? {
        try reviews.reviewQueue(name)
    }

    package func reviewItems(queue: Int64) throws(WorkspaceError) -> [ReviewItemRecord] {
        try reviews.reviewItems(queue: queue)
    }

    package func reviewAssignments(queue: Int64) throws(WorkspaceError) -> [String: Set<String>] {
        try reviews.reviewAssignments(queue: queue)
    }

    package func reviewLabels(queue: Int64) throws(WorkspaceError) -> [ReviewLabelRecord] {
        try reviews.reviewLabels(queue: queue)
    }

    package func addReviewLabels(_ labels: [ReviewLabelRecord]) throws(WorkspaceError) {
        try reviews.addReviewLabels(labels)
    }

    package func undoLastReviewLabel(queue: Int64, annotator: String) throws(WorkspaceError) -> ReviewLabelRecord? {
        try reviews.undoLastReviewLabel(queue: queue, annotator: annotator)
    }

    package func skipReviewItem(queue: Int64, itemKey: String, annotator: String, at: Date = Date())
        throws(WorkspaceError)
    {
        try reviews.skipReviewItem(queue: queue, itemKey: itemKey, annotator: annotator, at: at)
    }

    package func reviewSkips(queue: Int64, annotator: String) throws(WorkspaceError) -> [String] {
        try reviews.reviewSkips(queue: queue, annotator: annotator)
    }
}
