import Foundation
import GRDB

/// One answer still to make in a run answered by workers (`eval run --workers`).
package struct EvalWorkItem: Codable, FetchableRecord, PersistableRecord, Hashable, Sendable {
    package static let databaseTableName = "eval_work_items"
    package var runID: Int64
    package var itemID: String
    package var epoch: Int
    /// The item's place in the dataset: items are leased in this order.
    package var position: Int
    /// The item as the eval layer encodes it; the store only keeps it.
    package var itemJSON: String
    /// Who leased it last (`host:pid`, or the name given to `eval worker --name`).
    package var worker: String?
    /// Until when the lease holds, in seconds since 1970 by the database's clock.
    package var leaseUntil: Double?
    /// How many times it was leased: more than once when a worker died or stalled on it.
    package var attempts: Int
    /// When its answer was stored (database clock), nil while it is open.
    package var doneAt: Double?

    package init(runID: Int64, itemID: String, epoch: Int, position: Int, itemJSON: String) {
        self.runID = runID
        self.itemID = itemID
        self.epoch = epoch
        self.position = position
        self.itemJSON = itemJSON
        attempts = 0
    }

    package var key: EvalItemKey { EvalItemKey(itemID: itemID, epoch: epoch) }

    enum CodingKeys: String, CodingKey {
        case epoch, position, worker, attempts
        case runID = "run_id"
        case itemID = "item_id"
        case itemJSON = "item_json"
        case leaseUntil = "lease_until"
        case doneAt = "done_at"
    }
}

/// Where a worked run stands.
package struct EvalWorkProgress: Hashable, Sendable, Codable {
    package var total: Int
    package var done: Int
    /// Leased and not yet expired: being answered now.
    package var inFlight: Int

    package init(total: Int, done: Int, inFlight: Int) {
        self.total = total
        self.done = done
        self.inFlight = inFlight
    }

    /// Neither answered nor held by a live lease.
    package var waiting: Int { total - done - inFlight }
}

/// What one worker did for a run: its answers and how fast it made them.
package struct EvalWorkerActivity: Hashable, Sendable, Codable {
    package var worker: String
    package var answered: Int
    package var inFlight: Int
    /// Seconds between its first and last stored answer (database clock).
    package var activeSeconds: Double
    /// Seconds since its last answer, or since its last lease when it has answered none.
    package var idleSeconds: Double

    package init(worker: String, answered: Int, inFlight: Int, activeSeconds: Double, idleSeconds: Double) {
        self.worker = worker
        self.answered = answered
        self.inFlight = inFlight
        self.activeSeconds = activeSeconds
        self.idleSeconds = idleSeconds
    }

    /// Answers a second over its active time; nil before its second answer.
    package var answersPerSecond: Double? {
        answered > 1 && activeSeconds > 0 ? Double(answered - 1) / activeSeconds : nil
    }
}

extension EvalTables {
    /// Leases the next open item for `worker` for `leaseSeconds`: the first, in dataset order, of
    /// run `run` (or of any run) that has no answer and no live lease. Concurrent workers each
    /// get a different item without waiting for one another (PostgreSQL's `SKIP LOCKED`; SQLite
    /// has a single writer). Nil when every open item is answered or leased.
    package func leaseEvalWork(run: Int64?, worker: String, leaseSeconds: Double) throws(WorkspaceError)
        -> EvalWorkItem?
    {
        let now = dialect.nowSeconds
        var filter = "done_at IS NULL AND (lease_until IS NULL OR lease_until < \(now))"
        var arguments: [SQLValue] = []
        if let run {
            filter = "run_id = ? AND " + filter
            arguments.append(.integer(run))
        } else {
            // Only runs still being worked: one cancelled or failed keeps its open items.
            filter += " AND run_id IN (SELECT id FROM eval_runs WHERE status = 'running')"
        }
        // One statement, atomic on its own (one round trip on PostgreSQL, where every worker
        // thread leases before each answer). An UPDATE that finds nothing announces nothing:
        // eval_work_items announces its changes row by row (``PostgresStore``'s triggers), so
        // idle workers waiting for announcements do not wake one another.
        let lease = """
            UPDATE eval_work_items SET worker = ?, lease_until = \(now) + ?, attempts = attempts + 1
            WHERE (run_id, item_id, epoch) = (
              SELECT run_id, item_id, epoch FROM eval_work_items WHERE \(filter)
              ORDER BY run_id, position LIMIT 1\(dialect.skipLocked))
            RETURNING *
            """
        return try database.writeStatement(lease, [.text(worker), .real(leaseSeconds)] + arguments).first.map {
            row throws(WorkspaceError) in
            do { return try EvalWorkItem(row: row.grdbRow) } catch {
                throw WorkspaceError(
                    .database, path: "eval_work_items", message: "a leased item reads back wrong: \(error)")
            }
        }
    }

    /// Whether `worker` may answer (item, epoch) of `run`: no other worker has leased it since
    /// (an item with no work row, or never leased, is anyone's).
    static func holds(_ worker: String, run: Int64, itemID: String, epoch: Int, sql: any SQLStatements) throws
        -> Bool
    {
        let holder = try sql.execute(
            "SELECT worker FROM eval_work_items WHERE run_id = ? AND item_id = ? AND epoch = ?",
            [.integer(run), .text(itemID), .integer(Int64(epoch))]
        ).first?.text("worker")
        return holder == nil || holder == worker
    }

    /// Stores the trace of a model call made for (item, epoch) of `run` while `worker` holds the
    /// item, in one transaction with that check; nil, storing nothing, once another worker has
    /// leased it (this worker's answer is then dropped too, ``recordEvalResult(_:scores:worker:)``).
    /// The trace's external id names the item's answer, not the attempt, so an answer made again
    /// replaces the trace of the one before it in place: no attempt leaves a trace behind.
    package func importWorkTrace(_ trace: NewTrace, run: Int64, itemID: String, epoch: Int, worker: String)
        throws(WorkspaceError) -> Int64?
    {
        try database.writeStatements { sql in
            guard try Self.holds(worker, run: run, itemID: itemID, epoch: epoch, sql: sql) else { return nil }
            return try TraceTables.importTraces([trace], leaseKind: nil, into: sql).ids.first
        }
    }

    /// Extends the leases `worker` holds on open items by `leaseSeconds` from now: a worker
    /// alive on a slow answer keeps it. `held`: only these items, the ones its threads are
    /// answering; a lease it was granted but never heard of (the server went away before the
    /// answer reached it) then runs out and its item goes back to the queue, instead of being
    /// renewed for as long as the worker lives. Returns how many leases it renewed.
    @discardableResult
    package func renewEvalLeases(
        worker: String, leaseSeconds: Double, held: [(run: Int64, itemID: String, epoch: Int)]? = nil
    ) throws(WorkspaceError) -> Int {
        let now = dialect.nowSeconds
        var sql =
            "UPDATE eval_work_items SET lease_until = \(now) + ? WHERE worker = ? AND done_at IS NULL "
            + "AND lease_until IS NOT NULL"
        var arguments: [SQLValue] = [.real(leaseSeconds), .text(worker)]
        if let held {
            guard !held.isEmpty else { return 0 }
            sql +=
                " AND ("
                + Array(repeating: "(run_id = ? AND item_id = ? AND epoch = ?)", count: held.count)
                .joined(separator: " OR ") + ")"
            for item in held { arguments += [.integer(item.run), .text(item.itemID), .integer(Int64(item.epoch))] }
        }
        let statement = sql
        let bound = arguments
        return try database.writeStatements { sql in try sql.changes(statement, bound) }
    }

    /// Gives back the open items `worker` holds (a worker stopping early), so others take them at
    /// once instead of after the lease.
    package func releaseEvalLeases(worker: String) throws(WorkspaceError) {
        _ = try database.writeStatements { sql in
            try sql.execute(
                "UPDATE eval_work_items SET lease_until = NULL WHERE worker = ? AND done_at IS NULL", [.text(worker)])
        }
    }

    /// How many of a run's items are answered, being answered, or waiting.
    package func evalWorkProgress(run: Int64) throws(WorkspaceError) -> EvalWorkProgress {
        let now = dialect.nowSeconds
        return try database.readStatements { sql in
            let row = try sql.execute(
                """
                SELECT COUNT(*) AS total,
                  COALESCE(SUM(CASE WHEN done_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS done,
                  COALESCE(SUM(CASE WHEN done_at IS NULL AND lease_until >= \(now) THEN 1 ELSE 0 END), 0) AS flying
                FROM eval_work_items WHERE run_id = ?
                """, [.integer(run)]
            ).first
            return EvalWorkProgress(
                total: Int(row?.integer("total") ?? 0), done: Int(row?.integer("done") ?? 0),
                inFlight: Int(row?.integer("flying") ?? 0))
        }
    }

    /// Every worker that leased an item of run `run`, busiest first.
    package func evalWorkers(run: Int64) throws(WorkspaceError) -> [EvalWorkerActivity] {
        let now = dialect.nowSeconds
        return try database.readStatements { sql in
            try sql.execute(
                """
                SELECT worker,
                  COALESCE(SUM(CASE WHEN done_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS answered,
                  COALESCE(SUM(CASE WHEN done_at IS NULL AND lease_until >= \(now) THEN 1 ELSE 0 END), 0) AS flying,
                  COALESCE(MAX(done_at) - MIN(done_at), 0) AS active,
                  \(now) - COALESCE(MAX(done_at), MAX(lease_until)) AS idle
                FROM eval_work_items WHERE run_id = ? AND worker IS NOT NULL
                GROUP BY worker ORDER BY answered DESC, worker
                """, [.integer(run)]
            ).map { row in
                EvalWorkerActivity(
                    worker: row.text("worker") ?? "", answered: Int(row.integer("answered") ?? 0),
                    inFlight: Int(row.integer("flying") ?? 0), activeSeconds: row.real("active") ?? 0,
                    idleSeconds: max(0, row.real("idle") ?? 0))
            }
        }
    }

    /// The runs with work items still open and status running, oldest first.
    package func openWorkedRuns() throws(WorkspaceError) -> [Int64] {
        try database.readStatements { sql in
            try sql.execute(
                """
                SELECT id FROM eval_runs WHERE status = 'running'
                  AND EXISTS (SELECT 1 FROM eval_work_items w WHERE w.run_id = eval_runs.id AND w.done_at IS NULL)
                ORDER BY id
                """
            ).compactMap { $0.integer("id") }
        }
    }

    /// Runs still marked running whose every queued item is answered: the worker that stored the
    /// last answer stopped (was killed) before marking the run complete, so whoever looks next does.
    package func answeredWorkedRuns() throws(WorkspaceError) -> [Int64] {
        try database.readStatements { sql in
            try sql.execute(
                """
                SELECT id FROM eval_runs WHERE status = 'running'
                  AND EXISTS (SELECT 1 FROM eval_work_items w WHERE w.run_id = eval_runs.id)
                  AND NOT EXISTS (SELECT 1 FROM eval_work_items w WHERE w.run_id = eval_runs.id AND w.done_at IS NULL)
                ORDER BY id
                """
            ).compactMap { $0.integer("id") }
        }
    }

    /// Marks a worked run complete with its summary once every item is answered; exactly one
    /// caller wins when several workers finish at once. Returns whether this call marked it.
    package func completeWorkedRun(_ run: Int64, summaryJSON: String?, at: Date = Date()) throws(WorkspaceError)
        -> Bool
    {
        try database.writeStatements { sql in
            try sql.changes(
                """
                UPDATE eval_runs SET status = 'complete', ended_at = ?, summary_json = ?
                WHERE id = ? AND status = 'running'
                  AND NOT EXISTS (SELECT 1 FROM eval_work_items WHERE run_id = ? AND done_at IS NULL)
                """, [SQLValue(at), SQLValue(summaryJSON), .integer(run), .integer(run)]) > 0
        }
    }
}

extension EvalTables {
    /// Creates `run` and queues `items` (whatever run id they carry) for workers, in one
    /// transaction: a kill leaves either no run or a run with all its items.
    package func queueEvalRun(_ run: EvalRunRecord, items: [EvalWorkItem]) throws(WorkspaceError) -> Int64 {
        try database.writeStatements { sql in
            guard let id = try sql.insert(run, returningID: true).id else {
                throw WorkspaceError(.database, path: "eval_runs", message: "the new run was given no id")
            }
            for var item in items {
                item.runID = id
                try sql.insert(item)
            }
            return id
        }
    }
}
