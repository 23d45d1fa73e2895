import Foundation

/// Sparse autoencoders' tables: activation sets (float16 shards with each row's token and
/// place), SAE checkpoints with their training logs, feature labels and feature indexes. Written
/// once for both backends over a ``SQLDatabase``, so a team trains and browses its SAEs where its
/// traces and evals are.
///
/// A shard is one row of a few MB (4,096 rows of 384 float16s). A feature card reads a dozen rows
/// of it: SQLite reads those bytes through its incremental blob I/O, PostgreSQL through
/// `substr` on a column stored uncompressed (`STORAGE EXTERNAL`, see ``StoreTable``), which
/// fetches only the TOAST chunks that hold them.
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct SAETables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    /// A new, empty and not yet complete set that means to hold `plannedRows` rows.
    package func createActivationSet(model: String, layer: Int, dimensions: Int, plannedRows: Int? = nil)
        throws(WorkspaceError) -> Int64
    {
        try database.writeStatements { sql in
            let rows = try sql.execute(
                """
                INSERT INTO sae_activation_sets (model, layer, dimensions, "rows", created_at, planned_rows, complete)
                VALUES (?, ?, ?, 0, ?, ?, 0) RETURNING id
                """,
                [
                    .text(model), .integer(Int64(layer)), .integer(Int64(dimensions)), SQLValue(date: Date()),
                    plannedRows.map { .integer(Int64($0)) } ?? .null,
                ])
            guard let id = rows.first?.integer("id") else {
                throw WorkspaceError(.database, path: "sae_activation_sets", message: "the new set was given no id")
            }
            return id
        }
    }

    /// Marks a set complete when its last rows are already stored.
    package func completeActivationSet(_ set: Int64) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute("UPDATE sae_activation_sets SET complete = 1 WHERE id = ?", [.integer(set)])
        }
    }

    /// Appends one shard (float16 rows) and its tokens, and the set's row count, in one
    /// transaction; `completing` marks the set complete in that same transaction (its last rows).
    package func appendActivationShard(
        set: Int64, shard: Int, firstRow: Int, data: Data, tokens: [SAETokenRecord], completing: Bool = false
    ) throws(WorkspaceError) {
        try database.writeStatements { sql in
            if completing {
                try sql.execute("UPDATE sae_activation_sets SET complete = 1 WHERE id = ?", [.integer(set)])
            }
            try sql.execute(
                """
                INSERT INTO sae_activation_shards (set_id, shard, first_row, "rows", data) VALUES (?, ?, ?, ?, ?)
                """,
                [
                    .integer(set), .integer(Int64(shard)), .integer(Int64(firstRow)), .integer(Int64(tokens.count)),
                    .blob([UInt8](data)),
                ])
            try sql.insertRows(
                into: "sae_tokens", columns: ["set_id", "row", "chunk_id", "position", "token"],
                rows: tokens.map { token in
                    [
                        .integer(set), .integer(Int64(token.row)), .integer(token.chunkID),
                        .integer(Int64(token.position)), .text(token.token),
                    ]
                })
            try sql.execute(
                #"UPDATE sae_activation_sets SET "rows" = "rows" + ? WHERE id = ?"#,
                [.integer(Int64(tokens.count)), .integer(set)])
        }
    }

    package func activationSets() throws(WorkspaceError) -> [SAEActivationSet] {
        try database.readStatements { sql in
            try sql.fetch(SAEActivationSet.self, "SELECT * FROM sae_activation_sets ORDER BY id")
        }
    }

    /// Every shard of a set in order: (first row, rows, float16 data). Readers of rows use
    /// ``activationRowBytes(set:rows:bytesPerRow:)``, which reads only the bytes asked for.
    package func activationShards(set: Int64) throws(WorkspaceError) -> [(firstRow: Int, rows: Int, data: Data)] {
        try database.readStatements { sql in
            try sql.execute(
                #"SELECT first_row, "rows", data FROM sae_activation_shards WHERE set_id = ? ORDER BY shard"#,
                [.integer(set)]
            ).map { row in (Int(row.integer("first_row") ?? 0), Int(row.integer("rows") ?? 0), Self.data(row["data"])) }
        }
    }

    package func activationTokens(set: Int64, rows: [Int]) throws(WorkspaceError) -> [SAETokenRecord] {
        guard !rows.isEmpty else { return [] }
        let list = rows.map(String.init).joined(separator: ",")
        return try database.readStatements { sql in
            try sql.fetch(
                SAETokenRecord.self,
                #"SELECT "row", chunk_id, position, token FROM sae_tokens WHERE set_id = ? AND "row" IN ("# + list
                    + ")",
                [.integer(set)])
        }
    }

    /// The chunks a set's rows came from (a fidelity measure scores others).
    package func activationChunkIDs(set: Int64) throws(WorkspaceError) -> Set<Int64> {
        try database.readStatements { sql in
            Set(
                try sql.execute("SELECT DISTINCT chunk_id FROM sae_tokens WHERE set_id = ?", [.integer(set)])
                    .compactMap { $0.integer("chunk_id") })
        }
    }

    /// Rows `range` of set `set`, `bytesPerRow` each, as the parts of the shards that hold them
    /// (in row order, each with the first row it holds). Only those bytes are read: a card's
    /// contexts are a dozen rows of a 3 MB shard.
    package func activationRowBytes(set: Int64, rows range: Range<Int>, bytesPerRow: Int) throws(WorkspaceError)
        -> [(firstRow: Int, data: Data)]
    {
        try database.shardedRowBytes(
            ShardedRows(
                table: "sae_activation_shards", condition: "set_id = ?", arguments: [.integer(set)], order: "shard"),
            rows: range, bytesPerRow: bytesPerRow)
    }

    private static func data(_ value: SQLValue) -> Data {
        if case .blob(let bytes) = value { return Data(bytes) }
        return Data()
    }
}

extension SAETables {
    package func createSAEModel(set: Int64, layer: Int, width: Int, settingsJSON: String, state: Data)
        throws(WorkspaceError) -> Int64
    {
        try database.writeStatements { sql in
            let now = SQLValue(date: Date())
            let rows = try sql.execute(
                """
                INSERT INTO sae_models (set_id, layer, width, settings_json, step, state, created_at, updated_at)
                VALUES (?, ?, ?, ?, 0, ?, ?, ?) RETURNING id
                """,
                [
                    .integer(set), .integer(Int64(layer)), .integer(Int64(width)), .text(settingsJSON),
                    .blob([UInt8](state)), now, now,
                ])
            guard let id = rows.first?.integer("id") else {
                throw WorkspaceError(.database, path: "sae_models", message: "the new SAE was given no id")
            }
            return id
        }
    }

    /// Stores a checkpoint: the step reached, the state, the metrics so far and the new log rows,
    /// all or nothing. A step logged again (a resumed run) replaces that step's row.
    package func checkpointSAE(_ id: Int64, step: Int, state: Data, metricsJSON: String?, log: [SAELogRow])
        throws(WorkspaceError)
    {
        try database.writeStatements { sql in
            try sql.execute(
                "UPDATE sae_models SET step = ?, state = ?, metrics_json = ?, updated_at = ? WHERE id = ?",
                [
                    .integer(Int64(step)), .blob([UInt8](state)), metricsJSON.map { .text($0) } ?? .null,
                    SQLValue(date: Date()), .integer(id),
                ])
            for row in log {
                try sql.execute(
                    """
                    INSERT INTO sae_training_log (model_id, step, loss, mse, l0, fvu, dead, dense, learning_rate)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (model_id, step) DO UPDATE SET loss = excluded.loss, mse = excluded.mse,
                      l0 = excluded.l0, fvu = excluded.fvu, dead = excluded.dead, dense = excluded.dense,
                      learning_rate = excluded.learning_rate
                    """,
                    [
                        .integer(id), .integer(Int64(row.step)), .real(row.loss), .real(row.mse), .real(row.l0),
                        .real(row.fvu), .real(row.dead), .real(row.dense), .real(row.learningRate),
                    ])
            }
        }
    }

    package func saeModels() throws(WorkspaceError) -> [SAEModelRecord] {
        try database.readStatements { sql in try sql.fetch(SAEModelRecord.self, "SELECT * FROM sae_models ORDER BY id")
        }
    }

    /// The columns of `sae_models` but its parameters (`state` comes back empty, a constant, so
    /// neither backend reads the checkpoint).
    private var headerColumns: String {
        let empty = database.dialect == .sqlite ? "X''" : "'\\x'::bytea"
        return "id, set_id, layer, width, settings_json, step, \(empty) AS state, metrics_json, created_at, updated_at"
    }

    /// Every SAE's row without its parameters (`state` is empty): what listings need, without
    /// reading tens of MB of checkpoint per SAE.
    package func saeModelHeaders() throws(WorkspaceError) -> [SAEModelRecord] {
        let columns = headerColumns
        return try database.readStatements { sql in
            try sql.fetch(SAEModelRecord.self, "SELECT \(columns) FROM sae_models ORDER BY id")
        }
    }

    /// One SAE's row without its parameters (`state` is empty).
    package func saeModelHeader(_ id: Int64) throws(WorkspaceError) -> SAEModelRecord? {
        let columns = headerColumns
        return try database.readStatements { sql in
            try sql.fetch(SAEModelRecord.self, "SELECT \(columns) FROM sae_models WHERE id = ?", [.integer(id)]).first
        }
    }

    package func saeModel(_ id: Int64) throws(WorkspaceError) -> SAEModelRecord? {
        try database.readStatements { sql in
            try sql.fetch(SAEModelRecord.self, "SELECT * FROM sae_models WHERE id = ?", [.integer(id)]).first
        }
    }

    package func saeTrainingLog(_ id: Int64) throws(WorkspaceError) -> [SAELogRow] {
        try database.readStatements { sql in
            try sql.fetch(
                SAELogRow.self, "SELECT * FROM sae_training_log WHERE model_id = ? ORDER BY step", [.integer(id)])
        }
    }
}

extension SAETables {
    package func saeFeatureLabels(model: Int64) throws(WorkspaceError) -> [Int: String] {
        try database.readStatements { sql in
            var labels: [Int: String] = [:]
            for row in try sql.execute(
                "SELECT feature, label FROM sae_feature_labels WHERE model_id = ?", [.integer(model)])
            {
                if let feature = row.integer("feature") { labels[Int(feature)] = row.text("label") ?? "" }
            }
            return labels
        }
    }

    /// Sets feature `feature`'s label; nil or empty removes it.
    package func setSAEFeatureLabel(model: Int64, feature: Int, label: String?) throws(WorkspaceError) {
        try database.writeStatements { sql in
            if let label, !label.isEmpty {
                try sql.execute(
                    """
                    INSERT INTO sae_feature_labels (model_id, feature, label) VALUES (?, ?, ?)
                    ON CONFLICT (model_id, feature) DO UPDATE SET label = excluded.label
                    """, [.integer(model), .integer(Int64(feature)), .text(label)])
            } else {
                try sql.execute(
                    "DELETE FROM sae_feature_labels WHERE model_id = ? AND feature = ?",
                    [.integer(model), .integer(Int64(feature))])
            }
        }
    }

    /// The stored feature index of SAE `model` (its format is the caller's), with the training
    /// step it was built at; nil when none was stored.
    package func saeFeatureIndex(model: Int64) throws(WorkspaceError) -> (step: Int, data: Data)? {
        try database.readStatements { sql in
            try sql.execute("SELECT step, data FROM sae_feature_indexes WHERE model_id = ?", [.integer(model)])
                .first.map { (Int($0.integer("step") ?? 0), Self.data($0["data"])) }
        }
    }

    /// Keeps `data` as SAE `model`'s feature index at `step`, replacing an older one.
    package func storeSAEFeatureIndex(model: Int64, step: Int, data: Data) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute(
                """
                INSERT INTO sae_feature_indexes (model_id, step, data) VALUES (?, ?, ?)
                ON CONFLICT (model_id) DO UPDATE SET step = excluded.step, data = excluded.data
                """, [.integer(model), .integer(Int64(step)), .blob([UInt8](data))])
        }
    }
}

extension Workspace {
    /// The SAE tables on this file.
    package var saeTables: SAETables { SAETables(self) }
}
