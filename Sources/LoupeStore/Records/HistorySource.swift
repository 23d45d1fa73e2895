import Foundation
import GRDB

/// Where a command line in the workspace's history came from.
///
/// The history keeps each source's lines apart: the TUI's `:` line and the REPL recall only their
/// own, and `loupe history` shows which door each command came through.
package enum HistorySource: String, Codable, Sendable, CaseIterable {
    /// Typed on the TUI's `:` command line.
    case tui
    /// Typed at `loupe repl`'s prompt.
    case repl
    /// Run by a coding agent through a write tool of `loupe mcp --allow-writes` (schema v27).
    case mcp
}
