/// A query for the Retrieval panel, with the retriever and its knobs.
package struct RetrievalRequest: Hashable, Sendable {
    package var query: String
    package var options: RetrievalService.Options

    package init(_ query: String, options: RetrievalService.Options) {
        self.query = query
        self.options = options
    }
}
