/// A whole document, for the Retrieval panel's document view.
package struct RetrievalDocument: Hashable, Sendable {
    package var title: String
    package var body: String

    package init(title: String, body: String) {
        self.title = title
        self.body = body
    }
}
