import LoupeBase
import LoupeKit
import LoupeTUI

/// The pane under the panel that shows command output and the session's log.
package struct OutputPane: Hashable, Sendable {
    /// One command run and what it printed.
    package struct Entry: Hashable, Sendable {
        package var command: String
        package var outcome: CommandOutcome
    }

    package var isVisible = false
    /// Show every entry of the session instead of the last one.
    package var showsLog = false
    package var entries: [Entry] = []
    package var offset = 0

    /// The text lines the pane shows.
    func lines(theme: Theme) -> [[Span]] {
        let shown = showsLog ? entries : entries.suffix(1)
        var lines: [[Span]] = []
        for entry in shown {
            if showsLog {
                let mark = entry.outcome.succeeded ? Span("✓ ", theme.status(.ok)) : Span("✗ ", theme.status(.error))
                lines.append([mark, Span(":" + entry.command, theme.accent)])
            }
            if !entry.outcome.output.isEmpty {
                for line in UntrustedText.lines(entry.outcome.output) { lines.append([Span(line, theme.text)]) }
            }
            if let error = entry.outcome.error {
                for line in UntrustedText.lines(error) { lines.append([Span(line, theme.status(.error))]) }
            }
        }
        while lines.last?.plainText.isEmpty == true { lines.removeLast() }
        if lines.isEmpty { lines = [[Span("No command output yet. Press : to run a command.", theme.dim)]] }
        return lines
    }
}
