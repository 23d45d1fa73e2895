import Foundation
import Synchronization

/// Collects everything written, for the TUI and notebooks.
package final class CapturedOutput: OutputSink {
    private let buffer = Mutex<String>("")

    package init() {}
    package func write(_ text: String) { buffer.withLock { $0 += text } }
    package var text: String { buffer.withLock { $0 } }
}
