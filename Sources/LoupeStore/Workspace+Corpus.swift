import Foundation

/// The corpus tables of a SQLite workspace: ``CorpusTables`` over this file.
extension Workspace {
    package var corpus: CorpusTables { CorpusTables(self) }

    package func corpusCounts(model: String? = nil) throws(WorkspaceError) -> (
        sources: Int, documents: Int, chunks: Int, embedded: Int
    ) { try corpus.corpusCounts(model: model) }

    package func corpusStamp() throws(WorkspaceError) -> String { try corpus.corpusStamp() }

    package func chunks() throws(WorkspaceError) -> [StoredChunk] { try corpus.chunks() }

    package func document(externalID: String) throws(WorkspaceError) -> (title: String, body: String)? {
        try corpus.document(externalID: externalID)
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

    package func retrievalRecords(id: Int64? = nil, limit: Int = 50) throws(WorkspaceError) -> [StoredRetrieval] {
        try corpus.retrievalRecords(id: id, limit: limit)
    }
}
