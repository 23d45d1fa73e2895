import Foundation
import GRDB

/// What an import did.
package struct TraceImportCounts: Hashable, Sendable {
    package var added = 0
    package var replaced = 0
    package var unchanged = 0
    package var ids: [Int64] = []

    package init() {}
}
