import Foundation

/// A document read from a corpus file, before chunking.
package struct CorpusDocument: Hashable, Sendable {
    package var id: String
    package var title: String
    /// What is indexed and what chunk offsets point into: the title, a blank line, the text (or
    /// the text alone when there is no title).
    package var body: String

    /// The text without the title (the body when there is no title).
    package var text: String {
        title.isEmpty ? body : String(body.unicodeScalars.dropFirst(title.unicodeScalars.count + 2))
    }

    package init(id: String, title: String, text: String) {
        self.id = id
        self.title = title
        self.body = title.isEmpty ? text : title + "\n\n" + text
    }
}
