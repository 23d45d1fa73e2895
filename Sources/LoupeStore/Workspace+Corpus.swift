import Foundation

/// The corpus tables of a SQLite workspace: ``CorpusTables`` over this file.
extension Workspace {
    package var corpus: CorpusTables { CorpusTables(self) }

    package func sourceHash(path: String) throws(WorkspaceError) -> String? { try corpus.sourceHash(path: path) }

    package func replaceSource(
        path: String, hash: String, format: String, chunkerJSON: String, documents: [IngestDocument]
    ) throws(WorkspaceError) {
        try corpus.replaceSource(path: path, hash: hash, format: format, chunkerJSON: chunkerJSON, documents: documents)
    }

    package func corpusCounts(model: String? = nil) throws(WorkspaceError) -> (
        sources: Int, documents: Int, chunks: Int, embedded: Int
    ) { try corpus.corpusCounts(model: model) }

    package func corpusStamp() throws(WorkspaceError) -> String { try corpus.corpusStamp() }

    package func chunks() throws(WorkspaceError) -> [StoredChunk] { try corpus.chunks() }

    package func document(externalID: String) throws(WorkspaceError) -> (title: String, body: String)? {
        try corpus.document(externalID: externalID)
    }

    package func storeEmbeddings(_ embeddings: [(id: Int64, vector: [Float])], model: String) throws(WorkspaceError) {
        try corpus.storeEmbeddings(embeddings, model: model)
    }

    package func embeddings(model: String, dimensions: Int) throws(WorkspaceError) -> [(id: Int64, vector: [Float])] {
        try corpus.embeddings(model: model, dimensions: dimensions)
    }

    package func replaceQrels(source: String, judgments: [String: [String: Int]]) throws(WorkspaceError) {
        try corpus.replaceQrels(source: source, judgments: judgments)
    }

    package func replaceQrelsQueries(source: String, queries: [(id: String, text: String)]) throws(WorkspaceError) {
        try corpus.replaceQrelsQueries(source: source, queries: queries)
    }

    package func qrels(source: String? = nil) throws(WorkspaceError) -> (
        source: String, judgments: [String: [String: Int]]
    )? { try corpus.qrels(source: source) }

    @discardableResult
    package func recordRetrieval(query: String, retriever: String, paramsJSON: String, hitsJSON: String)
        throws(WorkspaceError) -> Int64
    { try corpus.recordRetrieval(query: query, retriever: retriever, paramsJSON: paramsJSON, hitsJSON: hitsJSON) }

    package func retrievalRecords(id: Int64? = nil, limit: Int = 50) throws(WorkspaceError) -> [StoredRetrieval] {
        try corpus.retrievalRecords(id: id, limit: limit)
    }
}
