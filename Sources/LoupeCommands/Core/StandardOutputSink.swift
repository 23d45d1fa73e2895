import Foundation
import Synchronization

/// The process's standard output.
package struct StandardOutputSink: OutputSink {
    package init() {}
    package func write(_ text: String) { Self.write(text) }

    /// Writes `text` to standard output; when the reader has gone (`loupe trace list | head`),
    /// the process ends quietly with 141, as a program killed by SIGPIPE does, instead of
    /// trapping in Foundation's `try!`. What it had written to a workspace is committed or
    /// rolled back as at any kill.
    static func write(_ text: String) {
        do {
            try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        } catch {
            exit(141)
        }
    }
}
