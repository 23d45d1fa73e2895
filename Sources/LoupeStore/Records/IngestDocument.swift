import Foundation
import GRDB

/// A document to store: its id in the source, title, body, and the chunks cut from the body.
package struct IngestDocument: Hashable, Sendable {
    package struct Chunk: Hashable, Sendable {
        package var startByte: Int
        package var endByte: Int
        package var text: String

        package init(startByte: Int, endByte: Int, text: String) {
            self.startByte = startByte
            self.endByte = endByte
            self.text = text
        }
    }

    package var externalID: String
    package var title: String
    package var body: String
    package var chunks: [Chunk]

    package init(externalID: String, title: String, body: String, chunks: [Chunk]) {
        self.externalID = externalID
        self.title = title
        self.body = body
        self.chunks = chunks
    }
}
