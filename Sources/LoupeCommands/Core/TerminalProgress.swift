import Foundation
import Glibc
import LoupeBase
import LoupeKit
import Synchronization

/// Progress of a shell command on one line of standard error, redrawn in place at most ten times
/// a second, and erased when the command ends — only where standard error is a terminal, so
/// pipes and logs get none of it.
final class TerminalProgress: Sendable {
    private let state = Mutex((last: 0.0, shown: false))
    private let columns: Int

    init(columns: Int) { self.columns = columns }

    static var isWanted: Bool { isatty(STDERR_FILENO) != 0 }

    func reporter() -> JobReporter {
        JobReporter(id: JobID(0)) { [self] _, progress in self.show(progress) }
    }

    private func show(_ progress: JobProgress) {
        let now = Date().timeIntervalSince1970
        let finished = progress.total.map { progress.completed >= $0 } ?? false
        let line: String? = state.withLock { state in
            guard now - state.last >= 0.1 || finished else { return nil }
            state.last = now
            state.shown = true
            var text = progress.detail
            if let total = progress.total, !text.contains("/\(Int(total))") {
                text = "[\(Int(progress.completed))/\(Int(total))] " + text
            }
            return TextWidth.truncate(UntrustedText.sanitized(text), toColumns: max(10, columns - 1))
        }
        guard let line else { return }
        FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8))
    }

    /// Erases the line, so the command's own output starts clean.
    func clear() {
        let shown = state.withLock { state in
            defer { state.shown = false }
            return state.shown
        }
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}

/// Standard output that first erases a progress line drawn on the same terminal.
struct ProgressClearingSink: OutputSink {
    let progress: TerminalProgress?

    func write(_ text: String) {
        progress?.clear()
        StandardOutputSink.write(text)
    }
}
