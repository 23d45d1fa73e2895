import Foundation
import GRDB

extension Workspace {
    /// Creates a queue with its items and assignments, all or nothing.
    /// - Throws: ``WorkspaceError`` with a constraint code when a queue of that name exists.
    package func createReviewQueue(
        _ queue: ReviewQueueRecord, items: [ReviewItemRecord], assignments: [(itemKey: String, annotator: String)]
    ) throws(WorkspaceError) -> Int64 {
        let assigned = assignments.map { [$0.itemKey, $0.annotator] }
        return try write { db in
            var queue = queue
            try queue.insert(db)
            let id = queue.id!
            for var item in items {
                item.queueID = id
                try item.insert(db)
            }
            for pair in assigned {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO review_assignments (queue_id, item_key, annotator) VALUES (?, ?, ?)",
                    arguments: [id, pair[0], pair[1]])
            }
            return id
        }
    }

    package func reviewQueues() throws(WorkspaceError) -> [ReviewQueueRecord] {
        try read { db in try ReviewQueueRecord.order(Column("id")).fetchAll(db) }
    }

    /// The queue named `name`, or whose id `name` is.
    package func reviewQueue(_ name: String) throws(WorkspaceError) -> ReviewQueueRecord? {
        try read { db in
            if let byName = try ReviewQueueRecord.filter(Column("name") == name).fetchOne(db) { return byName }
            guard let id = Int64(name) else { return nil }
            return try ReviewQueueRecord.fetchOne(db, key: id)
        }
    }

    package func reviewItems(queue: Int64) throws(WorkspaceError) -> [ReviewItemRecord] {
        try read { db in
            try ReviewItemRecord.filter(Column("queue_id") == queue).order(Column("position")).fetchAll(db)
        }
    }

    /// Who each item is assigned to (items assigned to nobody are open to anyone).
    package func reviewAssignments(queue: Int64) throws(WorkspaceError) -> [String: Set<String>] {
        try read { db in
            var out: [String: Set<String>] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT item_key, annotator FROM review_assignments WHERE queue_id = ?", arguments: [queue])
            {
                out[row["item_key"], default: []].insert(row["annotator"])
            }
            return out
        }
    }

    package func reviewLabels(queue: Int64) throws(WorkspaceError) -> [ReviewLabelRecord] {
        try read { db in
            try ReviewLabelRecord.filter(Column("queue_id") == queue).order(Column("id")).fetchAll(db)
        }
    }

    /// Stores labels in one transaction; a label replaces the same annotator's earlier label on
    /// that item and criterion, and labelling an item ends its skip.
    package func addReviewLabels(_ labels: [ReviewLabelRecord]) throws(WorkspaceError) {
        try write { db in
            for var label in labels {
                try label.insert(db)
                try db.execute(
                    sql: "DELETE FROM review_skips WHERE queue_id = ? AND item_key = ? AND annotator = ?",
                    arguments: [label.queueID, label.itemKey, label.annotator])
            }
        }
    }

    /// Removes `annotator`'s most recent label in the queue and returns it (nil when none).
    package func undoLastReviewLabel(queue: Int64, annotator: String) throws(WorkspaceError) -> ReviewLabelRecord? {
        try write { db in
            guard
                let last = try ReviewLabelRecord.filter(Column("queue_id") == queue && Column("annotator") == annotator)
                    .order(Column("id").desc).fetchOne(db)
            else { return nil }
            try db.execute(sql: "DELETE FROM review_labels WHERE id = ?", arguments: [last.id])
            return last
        }
    }

    /// Puts an item at the end of `annotator`'s order until they label it.
    package func skipReviewItem(queue: Int64, itemKey: String, annotator: String, at: Date = Date())
        throws(WorkspaceError)
    {
        try write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO review_skips (queue_id, item_key, annotator, skipped_at) VALUES (?, ?, ?, ?)
                    """, arguments: [queue, itemKey, annotator, at])
        }
    }

    /// The items `annotator` skipped, oldest skip first.
    package func reviewSkips(queue: Int64, annotator: String) throws(WorkspaceError) -> [String] {
        try read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT item_key FROM review_skips WHERE queue_id = ? AND annotator = ? ORDER BY skipped_at, rowid
                    """, arguments: [queue, annotator])
        }
    }
}
