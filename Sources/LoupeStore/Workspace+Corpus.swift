import Foundation
import GRDB

extension Workspace {
    /// The content hash recorded for `path`'s last ingest, if any.
    package func sourceHash(path: String) throws(WorkspaceError) -> String? {
        try read { db in
            try String.fetchOne(db, sql: "SELECT content_hash FROM sources WHERE path = ?", arguments: [path])
        }
    }

    /// Replaces everything ingested from `path` by `documents`, in one transaction: a kill half way
    /// leaves the previous state.
    package func replaceSource(
        path: String, hash: String, format: String, chunkerJSON: String, documents: [IngestDocument]
    ) throws(WorkspaceError) {
        try write { db in
            try db.execute(sql: "DELETE FROM sources WHERE path = ?", arguments: [path])
            try db.execute(
                sql:
                    "INSERT INTO sources (path, content_hash, format, chunker_json, ingested_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [path, hash, format, chunkerJSON, Date()])
            let source = db.lastInsertedRowID
            let insertDocument = try db.makeStatement(
                sql: "INSERT INTO documents (source_id, external_id, title, body) VALUES (?, ?, ?, ?)")
            let insertChunk = try db.makeStatement(
                sql: "INSERT INTO chunks (document_id, ordinal, start_byte, end_byte, text) VALUES (?, ?, ?, ?, ?)")
            for document in documents {
                try insertDocument.execute(arguments: [source, document.externalID, document.title, document.body])
                let id = db.lastInsertedRowID
                for (ordinal, chunk) in document.chunks.enumerated() {
                    try insertChunk.execute(arguments: [id, ordinal, chunk.startByte, chunk.endByte, chunk.text])
                }
            }
        }
    }

    /// Counts of sources, documents and chunks, and chunks with an embedding of `model`.
    package func corpusCounts(model: String? = nil) throws(WorkspaceError) -> (
        sources: Int, documents: Int, chunks: Int, embedded: Int
    ) {
        try read { db in
            (
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM sources") ?? 0,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM documents") ?? 0,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM chunks") ?? 0,
                try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM chunks WHERE embedding IS NOT NULL AND embedding_model = ?",
                    arguments: [model ?? ""]) ?? 0
            )
        }
    }

    /// What the ingested files were and how they were chunked, one line per source
    /// (`content_hash chunker_json`), sorted: the same files ingested the same way anywhere give
    /// the same lines, whatever their paths or row ids.
    package func corpusSourceLines() throws(WorkspaceError) -> [String] {
        try read { db in
            try String.fetchAll(
                db, sql: "SELECT content_hash || ' ' || chunker_json FROM sources ORDER BY content_hash, chunker_json")
        }
    }

    /// Identifies the chunk set: an index built from another stamp is stale.
    package func corpusStamp() throws(WorkspaceError) -> String {
        try read { db in
            let row = try Row.fetchOne(
                db, sql: "SELECT COUNT(*) AS n, COALESCE(MAX(id), 0) AS last, COALESCE(SUM(id), 0) AS total FROM chunks"
            )!
            return "\(row["n"] as Int64):\(row["last"] as Int64):\(row["total"] as Int64)"
        }
    }

    /// Every chunk, by id.
    package func chunks() throws(WorkspaceError) -> [StoredChunk] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT c.id, d.external_id, d.title, c.ordinal, c.start_byte, c.end_byte, c.text
                    FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY c.id
                    """
            ).map {
                StoredChunk(
                    id: $0[0], documentID: $0[1], title: $0[2], ordinal: $0[3], startByte: $0[4], endByte: $0[5],
                    text: $0[6])
            }
        }
    }

    /// A document's title and body by its external id (the first, if several sources share it).
    package func document(externalID: String) throws(WorkspaceError) -> (title: String, body: String)? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT title, body FROM documents WHERE external_id = ? ORDER BY id LIMIT 1",
                arguments: [externalID]
            ).map { ($0[0], $0[1]) }
        }
    }

    /// Chunks that have no embedding from `model` yet: id and text.
    package func chunksWithoutEmbedding(model: String) throws(WorkspaceError) -> [(id: Int64, text: String)] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT id, text FROM chunks WHERE embedding IS NULL OR embedding_model IS NOT ? ORDER BY id",
                arguments: [model]
            ).map { ($0[0], $0[1]) }
        }
    }

    /// Stores a batch of embeddings (Float32 little-endian) in one transaction.
    package func storeEmbeddings(_ embeddings: [(id: Int64, vector: [Float])], model: String) throws(WorkspaceError) {
        try write { db in
            let statement = try db.makeStatement(
                sql: "UPDATE chunks SET embedding = ?, embedding_model = ? WHERE id = ?")
            for (id, vector) in embeddings {
                let data = vector.withUnsafeBufferPointer { Data(buffer: $0) }
                try statement.execute(arguments: [data, model, id])
            }
        }
    }

    /// Every chunk's embedding from `model`, by chunk id; a BLOB of the wrong size is an error.
    package func embeddings(model: String, dimensions: Int) throws(WorkspaceError) -> [(id: Int64, vector: [Float])] {
        try read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, embedding FROM chunks WHERE embedding_model = ? ORDER BY id", arguments: [model]
            ).compactMap { row -> (Int64, [Float])? in
                let data: Data = row[1]
                guard data.count == dimensions * 4 else { return nil }
                let vector = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
                return (row[0], vector)
            }
        }
    }

    package func storedIndex(kind: String) throws(WorkspaceError) -> StoredIndex? {
        try read { db in
            try Row.fetchOne(
                db, sql: "SELECT kind, params_json, corpus_stamp, data FROM retrieval_indexes WHERE kind = ?",
                arguments: [kind]
            ).map { StoredIndex(kind: $0[0], paramsJSON: $0[1], corpusStamp: $0[2], data: $0[3]) }
        }
    }

    package func storeIndex(_ index: StoredIndex) throws(WorkspaceError) {
        try write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO retrieval_indexes (kind, params_json, corpus_stamp, built_at, data)
                    VALUES (?, ?, ?, ?, ?)
                    """, arguments: [index.kind, index.paramsJSON, index.corpusStamp, Date(), index.data])
        }
    }

    /// Replaces the judgments of `source` (a file name) in one transaction.
    package func replaceQrels(source: String, judgments: [String: [String: Int]]) throws(WorkspaceError) {
        try write { db in
            try db.execute(sql: "DELETE FROM qrels WHERE source = ?", arguments: [source])
            let statement = try db.makeStatement(
                sql: "INSERT INTO qrels (source, query_id, document_id, relevance) VALUES (?, ?, ?, ?)")
            for (query, documents) in judgments {
                for (document, relevance) in documents {
                    try statement.execute(arguments: [source, query, document, relevance])
                }
            }
        }
    }

    /// Stores the texts of `source`'s queries (replacing earlier ones).
    package func replaceQrelsQueries(source: String, queries: [(id: String, text: String)]) throws(WorkspaceError) {
        try write { db in
            try db.execute(sql: "DELETE FROM qrels_queries WHERE source = ?", arguments: [source])
            let statement = try db.makeStatement(
                sql: "INSERT OR REPLACE INTO qrels_queries (source, query_id, text) VALUES (?, ?, ?)")
            for query in queries { try statement.execute(arguments: [source, query.id, query.text]) }
        }
    }

    /// Every judged query's text, with its source and id, most recently loaded source first.
    package func judgedQueries() throws(WorkspaceError) -> [(source: String, id: String, text: String)] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT source, query_id, text FROM qrels_queries ORDER BY rowid DESC").map {
                ($0[0], $0[1], $0[2])
            }
        }
    }

    /// The judgments of `source`, or of the most recently loaded source when nil.
    package func qrels(source: String? = nil) throws(WorkspaceError) -> (
        source: String, judgments: [String: [String: Int]]
    )? {
        try read { db in
            let name =
                try source
                ?? String.fetchOne(db, sql: "SELECT source FROM qrels ORDER BY rowid DESC LIMIT 1")
            guard let name else { return nil }
            var judgments: [String: [String: Int]] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT query_id, document_id, relevance FROM qrels WHERE source = ?", arguments: [name])
            {
                judgments[row[0], default: [:]][row[1]] = row[2]
            }
            return judgments.isEmpty ? nil : (name, judgments)
        }
    }

    /// Saves a query run so it can be reopened and compared; returns its id.
    @discardableResult
    package func recordRetrieval(query: String, retriever: String, paramsJSON: String, hitsJSON: String)
        throws(WorkspaceError) -> Int64
    {
        try write { db in
            try db.execute(
                sql:
                    "INSERT INTO retrieval_records (query, retriever, params_json, hits_json, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [query, retriever, paramsJSON, hitsJSON, Date()])
            return db.lastInsertedRowID
        }
    }

    /// Saves an evaluation's mean and per-query figures; returns its id.
    @discardableResult
    package func recordRetrievalEval(
        retriever: String, paramsJSON: String, queries: String, qrelsSource: String, meanJSON: String,
        perQueryJSON: String
    ) throws(WorkspaceError) -> Int64 {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO retrieval_evals (retriever, params_json, queries, qrels_source, mean_json, per_query_json, created_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [retriever, paramsJSON, queries, qrelsSource, meanJSON, perQueryJSON, Date()])
            return db.lastInsertedRowID
        }
    }
}

extension Workspace {
    /// Saved query runs, newest first (`id`: that one only).
    package func retrievalRecords(id: Int64? = nil, limit: Int = 50) throws(WorkspaceError) -> [StoredRetrieval] {
        try read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, query, retriever, params_json, hits_json, created_at FROM retrieval_records
                    WHERE ?1 IS NULL OR id = ?1 ORDER BY id DESC LIMIT ?2
                    """, arguments: [id, limit]
            ).map {
                StoredRetrieval(
                    id: $0["id"], query: $0["query"], retriever: $0["retriever"], paramsJSON: $0["params_json"],
                    hitsJSON: $0["hits_json"], createdAt: $0["created_at"])
            }
        }
    }
}
