import ArgumentParser
import Foundation
import LoupeKit
import LoupePostgres
import LoupeStore

extension WorkspaceCommand {
    /// `loupe workspace copy SRC DST`: a workspace's rows into another, file or PostgreSQL.
    struct Copy: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a workspace into another: a file into PostgreSQL to share it, PostgreSQL into a file "
                + "to work offline.",
            discussion: """
                Either may be a file or a postgres:// URL (the password from the URL, PGPASSWORD or ~/.pgpass; \
                never printed). Ids survive, rows already there are left alone, so a second copy changes \
                nothing and a copy stopped part-way is finished by running it again. Rows the destination holds \
                under the same ids with other values are not overwritten: they are counted, and the command \
                fails naming the first.

                --since copies only the work made since then: traces imported, eval runs started, review \
                queues made, profiles and kernels measured, sources ingested, with everything under them; an \
                older run or queue that gained answers or labels since comes whole; what the chosen rows \
                refer to (an answer's trace, a fork's parent) comes along; tables without a time (prices, \
                judgments) come whole.
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The workspace to copy from.", valueName: "source")) var source: String
        @Argument(help: ArgumentHelp("The workspace to copy into (created when missing).", valueName: "destination"))
        var destination: String
        @Option(
            help: ArgumentHelp(
                "Only these groups, comma-separated: "
                    + WorkspaceCopy.groups.map(\.name).joined(separator: ", ")
                    + " (groups their rows refer to come along).", valueName: "groups"))
        var only: String?
        @Option(
            help: ArgumentHelp(
                "Only the work made since then: a UTC date or date and time (2026-11-20, 2026-11-20 14:30), "
                    + "or a time back (36h, 7d).", valueName: "date"))
        var since: String?
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run(in context: CommandContext) throws {
            let sinceDate = try self.sinceDate
            let from = try Self.endpoint(source, writing: false, context: context)
            if PostgresURL.redact(source) == PostgresURL.redact(destination)
                || (!PostgresURL.isURL(source)
                    && URL(fileURLWithPath: source).standardized == URL(fileURLWithPath: destination).standardized)
            {
                throw CommandFailure("\(from.name) is both the source and the destination; give another destination")
            }
            let into = try Self.endpoint(destination, writing: true, context: context)
            defer {
                for end in [from, into] { if case .postgres(let store) = end { store.close() } }
            }
            let groups = only.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            // What finishes this copy if it stops part-way, kept in the destination until it ends
            // (the URLs without their passwords).
            let rerun =
                (["loupe", "workspace", "copy", from.name, into.name] + (only.map { ["--only", $0] } ?? [])
                + (since.map { ["--since", $0] } ?? [])).map(Self.shellQuoted).joined(separator: " ")
            let report = try WorkspaceCopy.copy(
                from: from, to: into, only: groups, since: sinceDate.map(WorkspaceCopy.Since.init), rerun: rerun
            ) { table, rows in
                context.reporter.report(JobProgress(completed: Double(rows), total: nil, detail: table))
            }
            if json {
                context.print(try Formatting.json(CopyJSON(source: from.name, destination: into.name, report: report)))
            } else {
                context.print("copied \(from.name) → \(into.name)")
                if let sinceDate {
                    context.print(
                        "  the work made since \(WorkspaceCopy.Since.describe(sinceDate)) UTC, with what it refers to")
                }
                if !report.addedGroups.isEmpty {
                    context.print(
                        "  with \(report.addedGroups.joined(separator: ", ")) (the chosen rows refer to them)")
                }
                let width = max(22, report.tables.map { $0.table.count }.max() ?? 0)
                context.print(
                    "  " + "table".padding(toLength: width, withPad: " ", startingAt: 0)
                        + "     rows   copied  already there  differing")
                // Empty tables are counted, not listed: a small workspace has thirty of them.
                let empty = report.tables.filter { $0.rows == 0 }.count
                for table in report.tables where table.rows > 0 {
                    context.print(
                        "  " + table.table.padding(toLength: width, withPad: " ", startingAt: 0)
                            + Self.column(table.rows, 9) + Self.column(table.copied, 9) + Self.column(table.present, 15)
                            + Self.column(table.differing, 11))
                }
                if empty > 0 { context.print("  (\(Formatting.count(empty, "table")) empty in the source)") }
                let rows = report.tables.reduce(0) { $0 + $1.rows }
                context.print(
                    "\(Formatting.count(rows, "row")), \(Formatting.bytes(Int64(report.bytes))) in "
                        + String(format: "%.2f s (%.1f MB/s)", report.seconds, report.megabytesPerSecond))
            }
            if let table = report.tables.first(where: { $0.differing > 0 }) {
                throw CommandFailure(
                    "\(Formatting.count(report.differing, "row")) of \(from.name) are held by \(into.name) under the same "
                        + "ids with other values and were left as they were (first: \(table.table) "
                        + "\(table.firstDifference ?? "")): the two hold different work under the same ids")
            }
        }

        /// `word` as a shell reads it back: quoted when it holds anything but plain characters.
        static func shellQuoted(_ word: String) -> String {
            let plain = word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_./:@,=+%".contains($0)) }
            return plain && !word.isEmpty ? word : "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }

        /// `--since` as a date, parsed before anything is opened.
        private var sinceDate: Date? {
            get throws {
                guard let since else { return nil }
                guard let date = WorkspaceCopy.Since.parse(since) else {
                    throw CommandFailure(
                        "--since \(since): not a date (2026-11-20, 2026-11-20 14:30, in UTC) or a time back (36h, 7d)")
                }
                return date
            }
        }

        private static func column(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: " ", count: max(1, width - text.count)) + text
        }

        /// A file or a PostgreSQL database at this binary's schema; a source file must exist.
        static func endpoint(_ text: String, writing: Bool, context: CommandContext) throws -> WorkspaceEndpoint {
            if PostgresURL.isURL(text) { return .postgres(try PostgresStore.open(PostgresURL(text))) }
            if !writing, !FileManager.default.fileExists(atPath: text) {
                throw CommandFailure("\(text): no such workspace file to copy from")
            }
            return .sqlite(
                try Workspace(path: text, access: writing ? .write : .read, busyTimeout: context.session.busyTimeout))
        }
    }

    /// `workspace copy --json`.
    struct CopyJSON: Encodable {
        struct Table: Encodable {
            var table: String
            var rows: Int
            var copied: Int
            var alreadyThere: Int
            var differing: Int
            var bytes: Int
        }
        var source: String
        var destination: String
        var addedGroups: [String]
        var tables: [Table]
        var bytes: Int
        var seconds: Double
        var megabytesPerSecond: Double

        init(source: String, destination: String, report: WorkspaceCopy.Report) {
            self.source = source
            self.destination = destination
            addedGroups = report.addedGroups
            tables = report.tables.map {
                Table(
                    table: $0.table, rows: $0.rows, copied: $0.copied, alreadyThere: $0.present,
                    differing: $0.differing,
                    bytes: $0.bytes)
            }
            bytes = report.bytes
            seconds = report.seconds
            megabytesPerSecond = report.megabytesPerSecond
        }
    }
}
