import LoupeStore

/// The Retrieval panel's port: a query's ranking with every retriever's view of it, and whole
/// documents. Reads only: a panel query is not saved as a retrieval record (`loupe search`,
/// evals and the agent save theirs).
///
/// Thread-safety: any thread.
package struct RetrievalBrowser: Sendable {
    let service: RetrievalService

    /// The browser of a workspace's corpus: a SQLite ``Workspace`` or a PostgreSQL workspace.
    package init(database: any SQLDatabase, models: ModelLibrary) {
        service = RetrievalService(database: database, models: models)
    }

    /// The hits of `request`, BM25's and dense's own top k, and the query's judgments and
    /// metrics when it is a judged query.
    package func search(_ request: RetrievalRequest) throws -> RetrievalResult {
        try service.ranking(request.query, options: request.options)
    }

    /// The document with external id `id`, or nil when the workspace has none.
    package func document(_ id: String) throws -> RetrievalDocument? {
        try service.corpus.document(externalID: id).map { RetrievalDocument(title: $0.title, body: $0.body) }
    }
}
