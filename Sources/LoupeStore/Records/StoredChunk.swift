import Foundation
import GRDB

/// A stored chunk with its document's id and title.
package struct StoredChunk: Hashable, Sendable {
    package var id: Int64
    package var documentID: String
    package var title: String
    package var ordinal: Int
    package var startByte: Int
    package var endByte: Int
    package var text: String
}
