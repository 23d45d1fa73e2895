import Foundation
import LoupeStore

/// Either end of a `workspace copy`: a SQLite file or a PostgreSQL database, both at this
/// binary's schema.
package enum WorkspaceEndpoint: Sendable {
    case sqlite(Workspace)
    case postgres(PostgresStore)

    /// The endpoint's tables through the statements both backends run.
    package var database: any SQLDatabase {
        switch self {
        case .sqlite(let workspace): workspace
        case .postgres(let store): store
        }
    }

    /// The workspace's name as a user gave it (a URL without its password).
    package var name: String { database.displayName }

    /// The rows of `sql`, values in the order of its columns.
    package func rows(_ sql: String, _ arguments: [SQLValue]) throws(WorkspaceError) -> [[SQLValue]] {
        try database.readStatements { statements in try statements.execute(sql, arguments).map(\.values) }
    }

    /// Runs `body` in one write transaction; its statement function returns the rows of each.
    func write<T: Sendable>(
        _ body: @Sendable (_ execute: (String, [SQLValue]) throws -> [[SQLValue]]) throws -> T
    ) throws(WorkspaceError) -> T {
        try database.writeStatements { statements in
            try body { sql, arguments in try statements.execute(sql, arguments).map(\.values) }
        }
    }
}

/// `loupe workspace copy`: every row of the chosen tables from one workspace into another,
/// SQLite → PostgreSQL to share work, PostgreSQL → SQLite to take it offline.
///
/// Ids survive, so what refers to a row still finds it. A row already at the destination under
/// the same key is left alone: a second copy changes nothing, and a copy stopped by a kill is
/// resumed by running it again (each batch commits on its own). A row the destination holds
/// under the same key with other values is not overwritten but counted and named: the two
/// workspaces hold different work under the same ids.
package enum WorkspaceCopy {
    /// The groups `--only` takes, and the tables each holds.
    package static let groups: [(name: String, tables: [String])] = [
        ("settings", ["settings", "models", "model_prices"]),
        ("history", ["command_history"]),
        ("roofline", ["machine_profiles", "ceilings", "kernel_runs"]),
        (
            "retrieval",
            [
                "sources", "documents", "chunks", "retrieval_indexes", "qrels", "qrels_queries", "retrieval_records",
                "retrieval_evals", "ann_sweeps",
            ]
        ),
        ("traces", ["traces", "spans", "trace_scores", "trace_model_usage"]),
        ("evals", ["eval_runs", "eval_results", "eval_scores", "eval_work_items"]),
        (
            "sae",
            [
                "sae_activation_sets", "sae_activation_shards", "sae_tokens", "sae_models", "sae_training_log",
                "sae_feature_labels", "sae_feature_indexes",
            ]
        ),
        ("labels", ["review_queues", "review_items", "review_assignments", "review_labels", "review_skips"]),
        ("profiles", ["profiler_traces", "profiler_names", "profiler_events", "profiler_lanes"]),
    ]

    /// The setting a copy writes into its destination before anything else and removes in its
    /// last transaction: while it is there the destination holds part of the source (a copy
    /// stopped by a kill, a lost server), and `workspace check` says so. Its value is the command
    /// that finishes the copy.
    package static let inProgressKey = "loupe.workspace_copy_in_progress"

    /// Tables never copied: a lease names a process on one machine.
    package static let machineLocal: Set<String> = ["job_leases"]

    /// What one table's copy did.
    package struct TableReport: Sendable, Hashable {
        package var table: String
        /// Rows at the source.
        package var rows = 0
        /// Rows written to the destination.
        package var copied = 0
        /// Rows the destination already held, the same.
        package var present = 0
        /// Rows the destination holds under the same key with other values (left as they are).
        package var differing = 0
        /// The first such row's key, for the message.
        package var firstDifference: String?
        /// Bytes of the values read.
        package var bytes = 0
    }

    package struct Report: Sendable, Hashable {
        package var tables: [TableReport] = []
        /// Groups added because a chosen group's rows refer to theirs.
        package var addedGroups: [String] = []
        package var seconds = 0.0

        package var bytes: Int { tables.reduce(0) { $0 + $1.bytes } }
        package var copied: Int { tables.reduce(0) { $0 + $1.copied } }
        package var differing: Int { tables.reduce(0) { $0 + $1.differing } }
        package var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1e6 / seconds : 0 }
    }

    /// The tables to copy for `only` (all when nil), parents first, and the groups added for
    /// the rows the chosen ones refer to.
    ///
    /// - Throws: ``WorkspaceError`` naming an unknown group.
    package static func plan(only: [String]?) throws -> (tables: [StoreTable], added: [String]) {
        let all = try StoreTable.current()
        let known = Set(groups.map(\.name))
        var chosen = Set(only ?? groups.map(\.name))
        if let unknown = chosen.subtracting(known).sorted().first {
            throw WorkspaceError(
                .database, path: "--only",
                message: "\(unknown) is not a group; the groups are \(groups.map(\.name).joined(separator: ", "))")
        }
        let groupOf = Dictionary(uniqueKeysWithValues: groups.flatMap { g in g.tables.map { ($0, g.name) } })
        var added: [String] = []
        var changed = true
        while changed {
            changed = false
            for table in all where chosen.contains(groupOf[table.name] ?? "") {
                for key in table.foreignKeys {
                    if let parent = groupOf[key.table], !chosen.contains(parent) {
                        chosen.insert(parent)
                        added.append(parent)
                        changed = true
                    }
                }
            }
        }
        return (all.filter { chosen.contains(groupOf[$0.name] ?? "") }, added)
    }

    /// Copies the tables of `only`'s groups (every group when nil) from `source` to
    /// `destination`; with `since`, only the work made since then (``Since``).
    ///
    /// The destination is marked as holding an unfinished copy (``inProgressKey``) until the last
    /// table is copied.
    ///
    /// - Parameter rerun: the command that finishes the copy if it is stopped (kept in the mark).
    /// - Parameter progress: called after each batch with the table and the rows copied so far.
    package static func copy(
        from source: WorkspaceEndpoint, to destination: WorkspaceEndpoint, only: [String]? = nil,
        since: Since? = nil, rerun: String? = nil, progress: (String, Int) -> Void = { _, _ in }
    ) throws -> Report {
        let start = DispatchTime.now().uptimeNanoseconds
        let (tables, added) = try plan(only: only)
        var report = Report(addedGroups: added)
        try SettingsTables(destination.database).setSetting(
            inProgressKey, to: rerun ?? "loupe workspace copy \(source.name) \(destination.name)")
        for table in tables {
            var condition = try since?.condition(table.name)
            if table.name == "settings" {
                // The source's own mark, if it is an unfinished copy itself, is not this copy's.
                condition = (
                    sql: ([condition?.sql].compactMap { $0 } + ["\(StoreTable.quote("key")) <> ?"])
                        .joined(separator: " AND "),
                    arguments: (condition?.arguments ?? []) + [.text(inProgressKey)]
                )
            }
            report.tables.append(
                try copy(table, from: source, to: destination, condition: condition, progress: progress))
        }
        if case .postgres(let store) = destination { try resetIdentities(tables, in: store) }
        _ = try destination.write { execute in
            try execute("DELETE FROM settings WHERE \(StoreTable.quote("key")) = ?", [.text(inProgressKey)])
        }
        report.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return report
    }

    private static func copy(
        _ table: StoreTable, from source: WorkspaceEndpoint, to destination: WorkspaceEndpoint,
        condition: (sql: String, arguments: [SQLValue])?, progress: (String, Int) -> Void
    ) throws -> TableReport {
        var report = TableReport(table: table.name)
        let byRowid = table.primaryKey.isEmpty
        let columns = (byRowid ? [StoreTable.rowidColumn] : []) + table.copiedColumns.map(\.name)
        let keys = table.keyColumns
        let keyIndexes = keys.map { key in columns.firstIndex(of: key)! }
        let hasBlobs = table.columns.contains { $0.declaredType == "BLOB" }
        // Rows a batch: as many as fit the binds; a table with blobs starts at 16 rows and grows
        // or shrinks so that a batch holds about 4 MB (a span's source may be 1 KB or 10 MB).
        let most = max(1, min(500, 30_000 / columns.count))
        var batch = hasBlobs ? min(16, most) : most
        let quotedTable = StoreTable.quote(table.name)
        let order = StoreTable.list(keys)
        // PostgreSQL's type of each column copied, worked out once a table (SQLite takes any value).
        let declared = Dictionary(uniqueKeysWithValues: table.columns.map { ($0.name, $0.declaredType) })
        let typed: [String]? =
            if case .postgres = destination {
                columns.map { StoreTable.postgresType(declared[$0] ?? "INTEGER") }
            } else {
                nil
            }
        var after: [SQLValue]?
        while true {
            // The next page after the last key read, of the rows `condition` chooses.
            let filters = [condition?.sql, after.map { _ in "(\(order)) > (\(StoreTable.placeholders(keys.count)))" }]
                .compactMap { $0 }
            let page = try source.rows(
                "SELECT \(StoreTable.list(columns)) FROM \(quotedTable)"
                    + (filters.isEmpty ? "" : " WHERE " + filters.joined(separator: " AND "))
                    + " ORDER BY \(order) LIMIT \(batch)", (condition?.arguments ?? []) + (after ?? []))
            if page.isEmpty { break }
            after = keyIndexes.map { page[page.count - 1][$0] }
            report.rows += page.count
            let bytes = page.reduce(0) { $0 + $1.reduce(0) { $0 + $1.byteCount } }
            report.bytes += bytes
            let rows = try page.map { row in
                try typed.map {
                    try normalized(row, columns: columns, types: $0, table: table, destination: destination)
                }
                    ?? row
            }
            let outcome = try insert(rows, columns: columns, keyIndexes: keyIndexes, table: table, into: destination)
            report.copied += outcome.copied
            report.present += outcome.present
            report.differing += outcome.differing.count
            if report.firstDifference == nil, let first = outcome.differing.first {
                report.firstDifference = zip(keys, first).map { "\($0) \($1)" }.joined(separator: ", ")
            }
            progress(table.name, report.rows)
            if page.count < batch { break }
            if hasBlobs {
                if bytes < 2_000_000 {
                    batch = min(most, batch * 2)
                } else if bytes > 8_000_000 {
                    batch = max(1, batch / 2)
                }
            }
        }
        return report
    }

    private struct Outcome: Sendable {
        var copied = 0
        var present = 0
        var differing: [[SQLValue]] = []
    }

    /// Inserts `rows`, skipping those already there, and tells them apart from rows held under
    /// the same key with other values: one transaction.
    private static func insert(
        _ rows: [[SQLValue]], columns: [String], keyIndexes: [Int], table: StoreTable,
        into destination: WorkspaceEndpoint
    ) throws -> Outcome {
        let keys = table.keyColumns
        let quotedTable = StoreTable.quote(table.name)
        let values = Array(repeating: "(\(StoreTable.placeholders(columns.count)))", count: rows.count).joined(
            separator: ", ")
        let insert =
            "INSERT INTO \(quotedTable) (\(StoreTable.list(columns))) VALUES \(values) ON CONFLICT DO NOTHING "
            + "RETURNING \(StoreTable.list(keys))"
        let first = keyIndexes.map { rows[0][$0] }
        let last = keyIndexes.map { rows[rows.count - 1][$0] }
        let range =
            "SELECT \(StoreTable.list(columns)) FROM \(quotedTable) WHERE (\(StoreTable.list(keys))) >= "
            + "(\(StoreTable.placeholders(keys.count))) AND (\(StoreTable.list(keys))) <= (\(StoreTable.placeholders(keys.count)))"
        return try destination.write { execute in
            let inserted = Set(try execute(insert, rows.flatMap { $0 }))
            // Tables are copied one after another, so a trace's model usage arrives after its
            // row: the row is touched, so that a list kept between reads (the Traces panel's,
            // `TraceService.list(keeping:)`) reads the trace again with its cost.
            if table.name == "trace_model_usage", !inserted.isEmpty, let at = columns.firstIndex(of: "trace_id") {
                let traces = Array(Set(rows.map { $0[at] }))
                _ = try execute(
                    "UPDATE traces SET \(TraceTables.revisionColumn) = \(TraceTables.revisionColumn) WHERE id IN ("
                        + StoreTable.placeholders(traces.count) + ")", traces)
            }
            var outcome = Outcome(copied: inserted.count)
            let skipped = rows.filter { row in !inserted.contains(keyIndexes.map { row[$0] }) }
            if skipped.isEmpty { return outcome }
            let held = Dictionary(
                try execute(range, first + last).map { row in (keyIndexes.map { row[$0] }, row) },
                uniquingKeysWith: { a, _ in a })
            for row in skipped {
                if let there = held[keyIndexes.map { row[$0] }], same(there, row) {
                    outcome.present += 1
                } else {
                    outcome.differing.append(keyIndexes.map { row[$0] })
                }
            }
            return outcome
        }
    }

    /// Values equal as the workspace reads them (a whole DOUBLE may come back as an integer).
    private static func same(_ a: [SQLValue], _ b: [SQLValue]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            switch (x, y) {
            case (.integer(let i), .real(let d)), (.real(let d), .integer(let i)): Double(i) == d
            default: x == y
            }
        }
    }

    /// A source row's values as PostgreSQL's typed columns (`types`, one per column) take them.
    private static func normalized(
        _ row: [SQLValue], columns: [String], types: [String], table: StoreTable, destination: WorkspaceEndpoint
    ) throws -> [SQLValue] {
        try zip(zip(columns, types), row).map { pair, value in
            let (column, type) = pair
            switch (type, value) {
            case (_, .null): return .null
            case ("BIGINT", .integer), ("DOUBLE PRECISION", .real), ("TEXT", .text), ("BYTEA", .blob): return value
            case ("DOUBLE PRECISION", .integer(let integer)): return .real(Double(integer))
            case ("BIGINT", .real(let real)) where real == real.rounded() && abs(real) < 9e18:
                return .integer(Int64(real))
            case ("TEXT", .integer(let integer)): return .text(String(integer))
            case ("TEXT", .real(let real)): return .text(String(real))
            default:
                throw WorkspaceError(
                    .database, path: destination.name,
                    message: "\(table.name).\(column) holds \(value), which a \(type) column cannot take")
            }
        }
    }

    /// Identity columns go on from the largest id copied, so rows added later get new ids.
    private static func resetIdentities(_ tables: [StoreTable], in store: PostgresStore) throws {
        for table in tables where table.autoIncrement || table.primaryKey.isEmpty {
            let column = table.primaryKey.first ?? StoreTable.rowidColumn
            let quoted = StoreTable.quote(table.name)
            try store.execute(
                "SELECT setval(pg_get_serial_sequence(?, ?), GREATEST(COALESCE((SELECT MAX(\(StoreTable.quote(column))) "
                    + "FROM \(quoted)), 0), 1), COALESCE((SELECT MAX(\(StoreTable.quote(column))) FROM \(quoted)), 0) > 0)",
                [.text(quoted), .text(column)])
        }
    }
}
