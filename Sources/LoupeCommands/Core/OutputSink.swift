import Foundation
import Synchronization

/// Where a command's printed text goes: the process's stdout on the shell, a buffer in the
/// TUI and in notebooks (printing straight to stdout there would tear the screen).
package protocol OutputSink: Sendable {
    func write(_ text: String)
}

/// The process's standard output.
package struct StandardOutputSink: OutputSink {
    package init() {}
    package func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

/// Collects everything written, for the TUI and notebooks.
package final class CapturedOutput: OutputSink {
    private let buffer = Mutex<String>("")

    package init() {}
    package func write(_ text: String) { buffer.withLock { $0 += text } }
    package var text: String { buffer.withLock { $0 } }
}
