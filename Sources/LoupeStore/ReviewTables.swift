import Foundation
import GRDB

/// Review queues, their items and assignments, the labels people give and the items they skip:
/// written once, in SQL both backends run, over a ``SQLDatabase`` (a SQLite ``Workspace`` or a
/// PostgreSQL workspace), so a team labels into one place.
///
/// A label given again by the same annotator to the same item and criterion replaces the
/// earlier one as a new row (delete, then insert, in one transaction): SQLite's `REPLACE`
/// conflict clause did that, and "undo" takes back the newest row, so both backends must number
/// a replacement after everything before it.
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct ReviewTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    /// Creates a queue with its items and assignments, all or nothing.
    /// - Throws: ``WorkspaceError`` when a queue of that name exists (nothing of it is kept).
    package func createReviewQueue(
        _ queue: ReviewQueueRecord, items: [ReviewItemRecord], assignments: [(itemKey: String, annotator: String)]
    ) throws(WorkspaceError) -> Int64 {
        let pairs = assignments.map { [$0.itemKey, $0.annotator] }
        return try database.writeStatements { sql in
            guard let id = try sql.insert(queue, returningID: true).id else {
                throw WorkspaceError(.database, path: "review_queues", message: "the new queue was given no id")
            }
            try sql.insertRows(
                into: "review_items",
                columns: [
                    "queue_id", "position", "item_key", "run_id", "eval_item_id", "epoch", "trace_id", "ref_json",
                ],
                rows: items.map { item in
                    [
                        .integer(id), .integer(Int64(item.position)), .text(item.itemKey), SQLValue(item.runID),
                        SQLValue(item.evalItemID), SQLValue(item.epoch), SQLValue(item.traceID),
                        .text(item.refJSON),
                    ]
                })
            for pair in pairs {
                try sql.execute(
                    """
                    INSERT INTO review_assignments (queue_id, item_key, annotator) VALUES (?, ?, ?)
                    ON CONFLICT DO NOTHING
                    """, [.integer(id), .text(pair[0]), .text(pair[1])])
            }
            return id
        }
    }

    package func reviewQueues() throws(WorkspaceError) -> [ReviewQueueRecord] {
        try database.readStatements { sql in
            try sql.fetch(ReviewQueueRecord.self, "SELECT * FROM review_queues ORDER BY id")
        }
    }

    /// The queue named `name`, or whose id `name` is.
    package func reviewQueue(_ name: String) throws(WorkspaceError) -> ReviewQueueRecord? {
        try database.readStatements { sql in
            if let byName = try sql.fetch(
                ReviewQueueRecord.self, "SELECT * FROM review_queues WHERE name = ?", [.text(name)]
            ).first {
                return byName
            }
            guard let id = Int64(name) else { return nil }
            return try sql.fetch(ReviewQueueRecord.self, "SELECT * FROM review_queues WHERE id = ?", [.integer(id)])
                .first
        }
    }

    package func reviewItems(queue: Int64) throws(WorkspaceError) -> [ReviewItemRecord] {
        try database.readStatements { sql in
            try sql.fetch(
                ReviewItemRecord.self, "SELECT * FROM review_items WHERE queue_id = ? ORDER BY position",
                [.integer(queue)])
        }
    }

    /// Who each item is assigned to (items assigned to nobody are open to anyone).
    package func reviewAssignments(queue: Int64) throws(WorkspaceError) -> [String: Set<String>] {
        try database.readStatements { sql in
            var out: [String: Set<String>] = [:]
            for row in try sql.execute(
                "SELECT item_key, annotator FROM review_assignments WHERE queue_id = ?", [.integer(queue)])
            {
                if let key = row.text("item_key"), let annotator = row.text("annotator") {
                    out[key, default: []].insert(annotator)
                }
            }
            return out
        }
    }

    /// The queue's labels in the order they were given.
    package func reviewLabels(queue: Int64) throws(WorkspaceError) -> [ReviewLabelRecord] {
        try database.readStatements { sql in
            try sql.fetch(
                ReviewLabelRecord.self, "SELECT * FROM review_labels WHERE queue_id = ? ORDER BY id", [.integer(queue)])
        }
    }

    /// Stores labels in one transaction; a label replaces the same annotator's earlier label on
    /// that item and criterion, and labelling an item ends its skip.
    package func addReviewLabels(_ labels: [ReviewLabelRecord]) throws(WorkspaceError) {
        try database.writeStatements { sql in
            for label in labels {
                try sql.execute(
                    "DELETE FROM review_labels WHERE queue_id = ? AND item_key = ? AND criterion = ? AND annotator = ?",
                    [.integer(label.queueID), .text(label.itemKey), .text(label.criterion), .text(label.annotator)])
                var label = label
                label.id = nil
                try sql.insert(label)
                try sql.execute(
                    "DELETE FROM review_skips WHERE queue_id = ? AND item_key = ? AND annotator = ?",
                    [.integer(label.queueID), .text(label.itemKey), .text(label.annotator)])
            }
        }
    }

    /// Removes `annotator`'s most recent label in the queue and returns it (nil when none).
    package func undoLastReviewLabel(queue: Int64, annotator: String) throws(WorkspaceError) -> ReviewLabelRecord? {
        try database.writeStatements { sql in
            guard
                let last = try sql.fetch(
                    ReviewLabelRecord.self,
                    "SELECT * FROM review_labels WHERE queue_id = ? AND annotator = ? ORDER BY id DESC LIMIT 1",
                    [.integer(queue), .text(annotator)]
                ).first, let id = last.id
            else { return nil }
            try sql.execute("DELETE FROM review_labels WHERE id = ?", [.integer(id)])
            return last
        }
    }

    /// Puts an item at the end of `annotator`'s order until they label it.
    package func skipReviewItem(queue: Int64, itemKey: String, annotator: String, at: Date = Date())
        throws(WorkspaceError)
    {
        try database.writeStatements { sql in
            let key: [SQLValue] = [.integer(queue), .text(itemKey), .text(annotator)]
            try sql.execute("DELETE FROM review_skips WHERE queue_id = ? AND item_key = ? AND annotator = ?", key)
            try sql.execute(
                "INSERT INTO review_skips (queue_id, item_key, annotator, skipped_at) VALUES (?, ?, ?, ?)",
                key + [SQLValue(at)])
        }
    }

    /// The items `annotator` skipped, oldest skip first (two in one millisecond: in the order
    /// they were skipped).
    package func reviewSkips(queue: Int64, annotator: String) throws(WorkspaceError) -> [String] {
        let insertion = database.dialect.insertionOrder
        return try database.readStatements { sql in
            try sql.execute(
                """
                SELECT item_key FROM review_skips WHERE queue_id = ? AND annotator = ?
                ORDER BY skipped_at, \(insertion)
                """, [.integer(queue), .text(annotator)]
            ).compactMap { $0.text("item_key") }
        }
    }
}
