import Foundation
import GRDB

/// A saved query run: what was asked, how, and the hits as they were (JSON).
package struct StoredRetrieval: Hashable, Sendable {
    package var id: Int64
    package var query: String
    package var retriever: String
    package var paramsJSON: String
    package var hitsJSON: String
    package var createdAt: Date
}
