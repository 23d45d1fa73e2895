import Foundation
import GRDB

/// A stored index: what it was built with and from.
package struct StoredIndex: Hashable, Sendable {
    package var kind: String
    package var paramsJSON: String
    package var corpusStamp: String
    package var data: Data

    package init(kind: String, paramsJSON: String, corpusStamp: String, data: Data) {
        self.kind = kind
        self.paramsJSON = paramsJSON
        self.corpusStamp = corpusStamp
        self.data = data
    }
}
