import Foundation
import GRDB
import GRDBSQLite

extension Workspace {
    /// A new, empty and not yet complete set that means to hold `plannedRows` rows.
    package func createActivationSet(model: String, layer: Int, dimensions: Int, plannedRows: Int? = nil)
        throws(WorkspaceError) -> Int64
    {
        try write { db in
            try db.execute(
                sql:
                    "INSERT INTO sae_activation_sets (model, layer, dimensions, rows, created_at, planned_rows, complete) "
                    + "VALUES (?, ?, ?, 0, ?, ?, 0)",
                arguments: [model, layer, dimensions, Date(), plannedRows])
            return db.lastInsertedRowID
        }
    }

    /// Marks a set complete when its last rows are already stored.
    package func completeActivationSet(_ set: Int64) throws(WorkspaceError) {
        try write { db in
            try db.execute(sql: "UPDATE sae_activation_sets SET complete = 1 WHERE id = ?", arguments: [set])
        }
    }

    /// Appends one shard (float16 rows) and its tokens, and the set's row count, in one
    /// transaction; `completing` marks the set complete in that same transaction (its last rows).
    package func appendActivationShard(
        set: Int64, shard: Int, firstRow: Int, data: Data, tokens: [SAETokenRecord], completing: Bool = false
    ) throws(WorkspaceError) {
        try write { db in
            if completing {
                try db.execute(sql: "UPDATE sae_activation_sets SET complete = 1 WHERE id = ?", arguments: [set])
            }
            try db.execute(
                sql: "INSERT INTO sae_activation_shards (set_id, shard, first_row, rows, data) VALUES (?, ?, ?, ?, ?)",
                arguments: [set, shard, firstRow, tokens.count, data])
            let insert = try db.makeStatement(
                sql: "INSERT INTO sae_tokens (set_id, row, chunk_id, position, token) VALUES (?, ?, ?, ?, ?)")
            for token in tokens {
                try insert.execute(arguments: [set, token.row, token.chunkID, token.position, token.token])
            }
            try db.execute(
                sql: "UPDATE sae_activation_sets SET rows = rows + ? WHERE id = ?", arguments: [tokens.count, set])
        }
    }

    package func activationSets() throws(WorkspaceError) -> [SAEActivationSet] {
        try read { db in try SAEActivationSet.fetchAll(db, sql: "SELECT * FROM sae_activation_sets ORDER BY id") }
    }

    /// Every shard of a set in order: (first row, rows, float16 data). Readers of rows use
    /// ``activationRowBytes(set:rows:bytesPerRow:)``, which reads only the bytes asked for.
    package func activationShards(set: Int64) throws(WorkspaceError) -> [(firstRow: Int, rows: Int, data: Data)] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT first_row, rows, data FROM sae_activation_shards WHERE set_id = ? ORDER BY shard",
                arguments: [set]
            ).map { ($0["first_row"], $0["rows"], $0["data"]) }
        }
    }

    package func activationTokens(set: Int64, rows: [Int]) throws(WorkspaceError) -> [SAETokenRecord] {
        try read { db in
            guard !rows.isEmpty else { return [] }
            let list = rows.map(String.init).joined(separator: ",")
            return try SAETokenRecord.fetchAll(
                db, sql: "SELECT row, chunk_id, position, token FROM sae_tokens WHERE set_id = ? AND row IN (\(list))",
                arguments: [set])
        }
    }

    package func createSAEModel(set: Int64, layer: Int, width: Int, settingsJSON: String, state: Data)
        throws(WorkspaceError) -> Int64
    {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO sae_models (set_id, layer, width, settings_json, step, state, created_at, updated_at)
                    VALUES (?, ?, ?, ?, 0, ?, ?, ?)
                    """, arguments: [set, layer, width, settingsJSON, state, Date(), Date()])
            return db.lastInsertedRowID
        }
    }

    /// Stores a checkpoint: the step reached, the state, the metrics so far and the new log rows,
    /// all or nothing.
    package func checkpointSAE(_ id: Int64, step: Int, state: Data, metricsJSON: String?, log: [SAELogRow])
        throws(WorkspaceError)
    {
        try write { db in
            try db.execute(
                sql: "UPDATE sae_models SET step = ?, state = ?, metrics_json = ?, updated_at = ? WHERE id = ?",
                arguments: [step, state, metricsJSON, Date(), id])
            let insert = try db.makeStatement(
                sql: """
                    INSERT OR REPLACE INTO sae_training_log
                        (model_id, step, loss, mse, l0, fvu, dead, dense, learning_rate)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
            for row in log {
                try insert.execute(
                    arguments: [
                        id, row.step, row.loss, row.mse, row.l0, row.fvu, row.dead, row.dense, row.learningRate,
                    ])
            }
        }
    }

    package func saeModels() throws(WorkspaceError) -> [SAEModelRecord] {
        try read { db in try SAEModelRecord.fetchAll(db, sql: "SELECT * FROM sae_models ORDER BY id") }
    }

    /// The columns of `sae_models` but its parameters (`state` comes back empty).
    private static let saeHeaderColumns = """
        id, set_id, layer, width, settings_json, step, X'' AS state, metrics_json, created_at, updated_at
        """

    /// Every SAE's row without its parameters (`state` is empty): what listings need, without
    /// reading tens of MB of checkpoint per SAE.
    package func saeModelHeaders() throws(WorkspaceError) -> [SAEModelRecord] {
        try read { db in
            try SAEModelRecord.fetchAll(db, sql: "SELECT \(Self.saeHeaderColumns) FROM sae_models ORDER BY id")
        }
    }

    /// One SAE's row without its parameters (`state` is empty).
    package func saeModelHeader(_ id: Int64) throws(WorkspaceError) -> SAEModelRecord? {
        try read { db in
            try SAEModelRecord.fetchOne(
                db, sql: "SELECT \(Self.saeHeaderColumns) FROM sae_models WHERE id = ?", arguments: [id])
        }
    }

    package func saeModel(_ id: Int64) throws(WorkspaceError) -> SAEModelRecord? {
        try read { db in try SAEModelRecord.fetchOne(db, sql: "SELECT * FROM sae_models WHERE id = ?", arguments: [id])
        }
    }

    package func saeTrainingLog(_ id: Int64) throws(WorkspaceError) -> [SAELogRow] {
        try read { db in
            try SAELogRow.fetchAll(
                db, sql: "SELECT * FROM sae_training_log WHERE model_id = ? ORDER BY step", arguments: [id])
        }
    }
}

extension Workspace {
    package func saeFeatureLabels(model: Int64) throws(WorkspaceError) -> [Int: String] {
        try read { db in
            var labels: [Int: String] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT feature, label FROM sae_feature_labels WHERE model_id = ?", arguments: [model])
            {
                labels[row["feature"]] = row["label"]
            }
            return labels
        }
    }

    package func setSAEFeatureLabel(model: Int64, feature: Int, label: String?) throws(WorkspaceError) {
        try write { db in
            if let label, !label.isEmpty {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO sae_feature_labels (model_id, feature, label) VALUES (?, ?, ?)",
                    arguments: [model, feature, label])
            } else {
                try db.execute(
                    sql: "DELETE FROM sae_feature_labels WHERE model_id = ? AND feature = ?",
                    arguments: [model, feature])
            }
        }
    }
}

extension Workspace {
    /// The stored feature index of SAE `model` (its format is the caller's), with the training
    /// step it was built at; nil when none was stored.
    package func saeFeatureIndex(model: Int64) throws(WorkspaceError) -> (step: Int, data: Data)? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT step, data FROM sae_feature_indexes WHERE model_id = ?", arguments: [model]
            ).map { ($0["step"], $0["data"]) }
        }
    }

    /// Keeps `data` as SAE `model`'s feature index at `step`, replacing an older one.
    package func storeSAEFeatureIndex(model: Int64, step: Int, data: Data) throws(WorkspaceError) {
        try write { db in
            try db.execute(
                sql: "INSERT OR REPLACE INTO sae_feature_indexes (model_id, step, data) VALUES (?, ?, ?)",
                arguments: [model, step, data])
        }
    }

    /// The shards of an activation set that hold any row in `range`, in order (float16 data).
    /// Rows `range` of set `set`, `bytesPerRow` each, as the parts of the shards that hold them
    /// (in row order, each with the first row it holds). Only those bytes are read, through
    /// SQLite's incremental blob I/O: a card's contexts are a dozen rows of a 3 MB shard.
    package func activationRowBytes(set: Int64, rows range: Range<Int>, bytesPerRow: Int) throws(WorkspaceError)
        -> [(firstRow: Int, data: Data)]
    {
        try read { db in
            let shards = try Row.fetchAll(
                db,
                sql: "SELECT rowid, first_row, rows FROM sae_activation_shards "
                    + "WHERE set_id = ? AND first_row < ? AND first_row + rows > ? ORDER BY shard",
                arguments: [set, range.upperBound, range.lowerBound]
            ).map { (rowid: $0[0] as Int64, firstRow: $0[1] as Int, rows: $0[2] as Int) }
            return try shards.map { shard in
                let first = max(range.lowerBound, shard.firstRow)
                let last = min(range.upperBound, shard.firstRow + shard.rows)
                var blob: OpaquePointer?
                let opened = sqlite3_blob_open(
                    db.sqliteConnection, "main", "sae_activation_shards", "data", shard.rowid, 0, &blob)
                defer { sqlite3_blob_close(blob) }
                guard opened == SQLITE_OK, let blob else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: opened), message: "cannot open shard blob")
                }
                let offset = (first - shard.firstRow) * bytesPerRow
                let length = max(0, min((last - first) * bytesPerRow, Int(sqlite3_blob_bytes(blob)) - offset))
                var data = Data(count: length)
                let status = data.withUnsafeMutableBytes { buffer in
                    length == 0 ? SQLITE_OK : sqlite3_blob_read(blob, buffer.baseAddress, Int32(length), Int32(offset))
                }
                guard status == SQLITE_OK else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: status), message: "cannot read shard blob")
                }
                return (first, data)
            }
        }
    }
}
