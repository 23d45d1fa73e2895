import Foundation
import GRDB

/// Where a command line was typed.
package enum HistorySource: String, Codable, Sendable {
    case tui
    case repl
}
