import Foundation
import Synchronization

/// Where a command's printed text goes: the process's stdout on the shell, a buffer in the
/// TUI and in notebooks (printing straight to stdout there would tear the screen).
package protocol OutputSink: Sendable {
    func write(_ text: String)
}
