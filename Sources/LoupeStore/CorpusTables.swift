import Foundation
import GRDB

/// The retrieval corpus (sources, documents, chunks and their embeddings), its built indexes,
/// relevance judgments and saved query runs: written once, in SQL both backends run, over a
/// ``SQLDatabase`` (a SQLite ``Workspace`` or a PostgreSQL workspace), so a team searches and
/// evaluates one corpus.
///
/// Thread-safety: any thread; each method is one read or one transaction.
package struct CorpusTables: Sendable {
    package let database: any SQLDatabase

    package init(_ database: any SQLDatabase) {
        self.database = database
    }

    // MARK: - Sources, documents and chunks

    /// The content hash recorded for `path`'s last ingest, if any.
    package func sourceHash(path: String) throws(WorkspaceError) -> String? {
        try database.readStatements { sql in
            try sql.execute("SELECT content_hash FROM sources WHERE path = ?", [.text(path)]).first?.text(
                "content_hash")
        }
    }

    /// Replaces everything ingested from `path` by `documents`, in one transaction: a kill half way
    /// leaves the previous state.
    package func replaceSource(
        path: String, hash: String, format: String, chunkerJSON: String, documents: [IngestDocument]
    ) throws(WorkspaceError) {
        try database.writeStatements { sql in
            try sql.execute("DELETE FROM sources WHERE path = ?", [.text(path)])
            let source = try sql.execute(
                """
                INSERT INTO sources (path, content_hash, format, chunker_json, ingested_at) VALUES (?, ?, ?, ?, ?)
                RETURNING id
                """, [.text(path), .text(hash), .text(format), .text(chunkerJSON), SQLValue(date: Date())]
            ).first?.integer("id")
            guard let source else {
                throw WorkspaceError(.database, path: "sources", message: "the new source was given no id")
            }
            // Many documents to a statement on PostgreSQL. The rows come back in any order, but
            // their ids were drawn from the identity in the order the rows were given, so the
            // sorted ids are the documents' in order.
            let ids = try sql.insertRows(
                into: "documents", columns: ["source_id", "external_id", "title", "body"],
                rows: documents.map { [.integer(source), .text($0.externalID), .text($0.title), .text($0.body)] },
                returning: ["id"]
            ).compactMap { $0.integer("id") }.sorted()
            guard ids.count == documents.count else {
                throw WorkspaceError(
                    .database, path: "documents",
                    message: "\(documents.count) documents were stored but \(ids.count) ids came back")
            }
            let chunks = zip(ids, documents).flatMap { id, document in
                document.chunks.enumerated().map { ordinal, chunk in
                    [
                        SQLValue.integer(id), .integer(Int64(ordinal)), .integer(Int64(chunk.startByte)),
                        .integer(Int64(chunk.endByte)), .text(chunk.text),
                    ]
                }
            }
            try sql.insertRows(
                into: "chunks", columns: ["document_id", "ordinal", "start_byte", "end_byte", "text"], rows: chunks)
        }
    }

    /// Counts of sources, documents and chunks, and chunks with an embedding of `model`.
    package func corpusCounts(model: String? = nil) throws(WorkspaceError) -> (
        sources: Int, documents: Int, chunks: Int, embedded: Int
    ) {
        try database.readStatements { sql in
            let row = try sql.execute(
                """
                SELECT (SELECT COUNT(*) FROM sources) AS sources, (SELECT COUNT(*) FROM documents) AS documents,
                (SELECT COUNT(*) FROM chunks) AS chunks,
                (SELECT COUNT(*) FROM chunks WHERE embedding IS NOT NULL AND embedding_model = ?) AS embedded
                """, [.text(model ?? "")]
            ).first
            func count(_ column: String) -> Int { Int(row?.integer(column) ?? 0) }
            return (count("sources"), count("documents"), count("chunks"), count("embedded"))
        }
    }

    /// What the ingested files were and how they were chunked, one line per source
    /// (`content_hash chunker_json`), sorted: the same files ingested the same way anywhere give
    /// the same lines, whatever their paths or row ids.
    package func corpusSourceLines() throws(WorkspaceError) -> [String] {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT content_hash || ' ' || chunker_json AS line FROM sources ORDER BY content_hash, chunker_json"
            ).compactMap { $0.text("line") }
        }
    }

    /// Identifies the chunk set: an index built from another stamp is stale.
    package func corpusStamp() throws(WorkspaceError) -> String {
        try database.readStatements { sql in
            // PostgreSQL's SUM of a BIGINT is NUMERIC: cast, so both stamps read alike.
            let row = try sql.execute(
                """
                SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last, CAST(COALESCE(SUM(id), 0) AS BIGINT) AS total
                FROM chunks
                """
            ).first
            func number(_ column: String) -> Int64 { row?.integer(column) ?? 0 }
            return "\(number("n")):\(number("last")):\(number("total"))"
        }
    }

    /// Every chunk, by id.
    package func chunks() throws(WorkspaceError) -> [StoredChunk] {
        try database.readStatements { sql in
            try sql.execute(
                """
                SELECT c.id, d.external_id, d.title, c.ordinal, c.start_byte, c.end_byte, c.text
                FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY c.id
                """
            ).map(Self.storedChunk)
        }
    }

    /// A chunk from a row of `id, external_id, title, ordinal, start_byte, end_byte, text`.
    static func storedChunk(_ row: SQLRow) -> StoredChunk {
        let values = row.values
        return StoredChunk(
            id: values[0].integer ?? 0, documentID: values[1].text ?? "", title: values[2].text ?? "",
            ordinal: Int(values[3].integer ?? 0), startByte: Int(values[4].integer ?? 0),
            endByte: Int(values[5].integer ?? 0), text: values[6].text ?? "")
    }

    /// A document's title and body by its external id (the first, if several sources share it).
    package func document(externalID: String) throws(WorkspaceError) -> (title: String, body: String)? {
        try database.readStatements { sql in
            try sql.execute(
                "SELECT title, body FROM documents WHERE external_id = ? ORDER BY id LIMIT 1", [.text(externalID)]
            ).first.map { ($0.text("title") ?? "", $0.text("body") ?? "") }
        }
    }

    // MARK: - Embeddings

    /// Chunks that have no embedding from `model` yet: id and text.
    package func chunksWithoutEmbedding(model: String) throws(WorkspaceError) -> [(id: Int64, text: String)] {
        try database.readStatements { sql in
            try sql.execute(
                """
                SELECT id, text FROM chunks
                WHERE embedding IS NULL OR embedding_model IS NULL OR embedding_model <> ? ORDER BY id
                """, [.text(model)]
            ).map { ($0.integer("id") ?? 0, $0.text("text") ?? "") }
        }
    }

    /// Stores a batch of embeddings (Float32 little-endian) in one transaction.
    package func storeEmbeddings(_ embeddings: [(id: Int64, vector: [Float])], model: String) throws(WorkspaceError) {
        let rows = embeddings.map { embedding in
            [SQLValue.blob(embedding.vector.withUnsafeBytes { [UInt8]($0) }), .text(model), .integer(embedding.id)]
        }
        try database.writeStatements { sql in
            for row in rows {
                try sql.execute("UPDATE chunks SET embedding = ?, embedding_model = ? WHERE id = ?", row)
            }
        }
    }

    /// Every chunk's embedding from `model`, by chunk id; a BLOB of the wrong size is left out.
    package func embeddings(model: String, dimensions: Int) throws(WorkspaceError) -> [(id: Int64, vector: [Float])] {
        try database.readStatements { sql in
            try sql.execute("SELECT id, embedding FROM chunks WHERE embedding_model = ? ORDER BY id", [.text(model)])
                .compactMap { row -> (Int64, [Float])? in
                    guard case .blob(let bytes) = row["embedding"], bytes.count == dimensions * 4,
                        let id = row.integer("id")
                    else { return nil }
                    let vector = [Float](unsafeUninitializedCapacity: dimensions) { buffer, count in
                        _ = bytes.withUnsafeBytes { memcpy(buffer.baseAddress!, $0.baseAddress!, dimensions * 4) }
                        count = dimensions
                    }
                    return (id, vector)
                }
        }
    }

    // MARK: - Built indexes

    /// The index of `kind` as last built. An HNSW index of a large corpus is hundreds of MB: its
    /// bytes are copied once, from the cursor (on SQLite straight from the statement).
    package func storedIndex(kind: String) throws(WorkspaceError) -> StoredIndex? {
        try database.readStatements { sql in
            var found: StoredIndex?
            try sql.forEachRow(
                "SELECT kind, params_json, corpus_stamp, data FROM retrieval_indexes WHERE kind = ?", [.text(kind)]
            ) { row in
                found = StoredIndex(
                    kind: row.text(0) ?? kind, paramsJSON: row.text(1) ?? "{}", corpusStamp: row.text(2) ?? "",
                    data: row.data(3) ?? Data())
            }
            return found
        }
    }

    /// Keeps a built index, replacing the one of its kind (a SQLite file binds its bytes as they are).
    package func storeIndex(_ index: StoredIndex) throws(WorkspaceError) {
        let upsert = """
            INSERT INTO retrieval_indexes (kind, params_json, corpus_stamp, built_at, data) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (kind) DO UPDATE SET params_json = excluded.params_json,
            corpus_stamp = excluded.corpus_stamp, built_at = excluded.built_at, data = excluded.data
            """
        try database.writeStatement(
            upsert, [.text(index.kind), .text(index.paramsJSON), .text(index.corpusStamp), SQLValue(date: Date())],
            bytes: index.data)
    }

    // MARK: - Judgments

    /// Replaces the judgments of `source` (a file name) in one transaction.
    package func replaceQrels(source: String, judgments: [String: [String: Int]]) throws(WorkspaceError) {
        let rows = judgments.flatMap { query, documents in
            documents.map { document, relevance in
                [SQLValue.text(source), .text(query), .text(document), .integer(Int64(relevance))]
            }
        }
        try database.writeStatements { sql in
            try sql.execute("DELETE FROM qrels WHERE source = ?", [.text(source)])
            try sql.insertRows(
                into: "qrels", columns: ["source", "query_id", "document_id", "relevance"], rows: rows)
        }
    }

    /// Stores the texts of `source`'s queries (replacing earlier ones; a query given twice keeps
    /// its last text).
    package func replaceQrelsQueries(source: String, queries: [(id: String, text: String)]) throws(WorkspaceError) {
        var latest: [String: String] = [:]
        var order: [String] = []
        for query in queries {
            if latest.updateValue(query.text, forKey: query.id) == nil { order.append(query.id) }
        }
        let rows = order.map { [SQLValue.text(source), .text($0), .text(latest[$0]!)] }
        try database.writeStatements { sql in
            try sql.execute("DELETE FROM qrels_queries WHERE source = ?", [.text(source)])
            try sql.insertRows(into: "qrels_queries", columns: ["source", "query_id", "text"], rows: rows)
        }
    }

    /// Every judged query's text, with its source and id, most recently loaded source first.
    package func judgedQueries() throws(WorkspaceError) -> [(source: String, id: String, text: String)] {
        try database.readStatements { [insertionOrder = database.dialect.insertionOrder] sql in
            try sql.execute("SELECT source, query_id, text FROM qrels_queries ORDER BY \(insertionOrder) DESC").map {
                ($0.text("source") ?? "", $0.text("query_id") ?? "", $0.text("text") ?? "")
            }
        }
    }

    /// The judgments of `source`, or of the most recently loaded source when nil.
    package func qrels(source: String? = nil) throws(WorkspaceError) -> (
        source: String, judgments: [String: [String: Int]]
    )? {
        try database.readStatements { [insertionOrder = database.dialect.insertionOrder] sql in
            let name =
                try source
                ?? sql.execute("SELECT source FROM qrels ORDER BY \(insertionOrder) DESC LIMIT 1").first?.text("source")
            guard let name else { return nil }
            var judgments: [String: [String: Int]] = [:]
            for row in try sql.execute(
                "SELECT query_id, document_id, relevance FROM qrels WHERE source = ?", [.text(name)])
            {
                judgments[row.text("query_id") ?? "", default: [:]][row.text("document_id") ?? ""] = Int(
                    row.integer("relevance") ?? 0)
            }
            return judgments.isEmpty ? nil : (name, judgments)
        }
    }

    // MARK: - Saved runs

    /// Saves a query run so it can be reopened and compared; returns its id.
    @discardableResult
    package func recordRetrieval(query: String, retriever: String, paramsJSON: String, hitsJSON: String)
        throws(WorkspaceError) -> Int64
    {
        try insertReturningID(
            into: "retrieval_records",
            [
                "query": .text(query), "retriever": .text(retriever), "params_json": .text(paramsJSON),
                "hits_json": .text(hitsJSON), "created_at": SQLValue(date: Date()),
            ])
    }

    /// Saves an evaluation's mean and per-query figures; returns its id.
    @discardableResult
    package func recordRetrievalEval(
        retriever: String, paramsJSON: String, queries: String, qrelsSource: String, meanJSON: String,
        perQueryJSON: String
    ) throws(WorkspaceError) -> Int64 {
        try insertReturningID(
            into: "retrieval_evals",
            [
                "retriever": .text(retriever), "params_json": .text(paramsJSON), "queries": .text(queries),
                "qrels_source": .text(qrelsSource), "mean_json": .text(meanJSON),
                "per_query_json": .text(perQueryJSON), "created_at": SQLValue(date: Date()),
            ])
    }

    private func insertReturningID(into table: String, _ values: [String: SQLValue]) throws(WorkspaceError) -> Int64 {
        let columns = values.keys.sorted()
        let row = columns.map { values[$0]! }
        return try database.writeStatements { sql in
            guard
                let id = try sql.insertRows(into: table, columns: columns, rows: [row], returning: ["id"]).first?
                    .integer("id")
            else { throw WorkspaceError(.database, path: table, message: "the new row was given no id") }
            return id
        }
    }

    /// Saved query runs, newest first (`id`: that one only).
    package func retrievalRecords(id: Int64? = nil, limit: Int = 50) throws(WorkspaceError) -> [StoredRetrieval] {
        try database.readStatements { sql in
            let chosen = id == nil ? "" : "WHERE id = ? "
            let arguments: [SQLValue] = (id.map { [.integer($0)] } ?? []) + [.integer(Int64(limit))]
            return try sql.execute(
                "SELECT id, query, retriever, params_json, hits_json, created_at FROM retrieval_records "
                    + chosen + "ORDER BY id DESC LIMIT ?", arguments
            ).map {
                let row = $0.grdbRow
                return StoredRetrieval(
                    id: row["id"], query: row["query"], retriever: row["retriever"], paramsJSON: row["params_json"],
                    hitsJSON: row["hits_json"], createdAt: row["created_at"])
            }
        }
    }
}
