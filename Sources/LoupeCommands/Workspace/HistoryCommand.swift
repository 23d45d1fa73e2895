import ArgumentParser
import Foundation
import LoupeBase
import LoupeStore

extension HistorySource: ExpressibleByArgument {}

/// `loupe history`: the command lines the workspace kept, with the door each came through.
struct HistoryCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "The commands kept in the workspace's history, and where each came from (tui, repl, mcp).",
        discussion: """
            The TUI's `:` line keeps what is typed there (source tui); `loupe mcp --allow-writes` keeps each \
            write a coding agent makes (source mcp). Credentials a line carried were redacted when it was kept. \
            Lines are listed oldest first, the latest --limit of them.
            """)

    @OptionGroup var global: GlobalOptions
    @Option(help: "Only the lines from this source: tui, repl or mcp.") var source: HistorySource?
    @Option(help: "How many of the latest lines to list.") var limit = 20
    @Flag(help: "Print JSON.") var json = false

    /// One line as `--json` prints it: the time in ISO 8601, UTC.
    struct Row: Encodable {
        var ranAt: String
        var source: String
        var line: String
    }

    func run(in context: CommandContext) throws {
        guard limit > 0 else { throw CommandFailure("--limit \(limit): give a positive number of lines") }
        let entries = try context.settings(access: .read).entries(source: source, limit: limit)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let rows = entries.map {
            Row(ranAt: formatter.string(from: $0.ranAt), source: $0.source.rawValue, line: $0.line)
        }
        if json { return context.print(try Formatting.json(rows)) }
        guard !rows.isEmpty else {
            return context.print(
                source.map { "no \($0.rawValue) lines in the history" } ?? "the history is empty")
        }
        for row in rows {
            // Typed by a person or an agent: shown with its control characters made visible.
            context.print(
                row.ranAt + "  " + row.source.padding(toLength: 4, withPad: " ", startingAt: 0) + "  "
                    + UntrustedText.sanitized(row.line))
        }
    }
}
