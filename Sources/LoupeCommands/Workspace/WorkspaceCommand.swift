import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupePostgres
import LoupeStore

/// `loupe workspace …`: create, inspect, check, compact and copy the workspace.
struct WorkspaceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workspace",
        abstract: "Create, inspect, check, compact and copy a workspace (a file, or a PostgreSQL database).",
        subcommands: [Init.self, Info.self, Check.self, Vacuum.self, Copy.self]
    )

    /// Refuses `command` on a PostgreSQL workspace, saying what does that job there.
    static func fileOnly(_ command: String, _ context: CommandContext, instead: String) throws {
        guard context.session.isPostgres else { return }
        throw CommandFailure(
            "\(context.session.displayPath) is a PostgreSQL workspace: workspace \(command) is for a workspace file; "
                + "there \(instead).")
    }

    struct Init: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the workspace (or bring an existing one to this loupe's schema).")
        @OptionGroup var global: GlobalOptions

        func run(in context: CommandContext) throws {
            if context.session.isPostgres {
                // Connecting creates the tables, or brings an older Loupe's forward.
                let version = try context.session.postgres().schemaVersion()
                return context.print("opened PostgreSQL workspace \(context.session.displayPath) (schema v\(version))")
            }
            let existed = FileManager.default.fileExists(atPath: context.session.path)
            let workspace = try context.workspace()
            let version = try workspace.schemaVersion()
            let verb = existed ? "opened existing workspace" : "created workspace"
            context.print("\(verb) \(context.session.displayPath) (schema v\(version))")
        }
    }

    struct Info: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the workspace's path, schema version, sizes and rows per table.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON instead of a table.") var json = false

        func run(in context: CommandContext) throws {
            if context.session.isPostgres { return try postgres(in: context) }
            var info = try context.workspace(access: .read).info()
            info.path = context.session.displayPath
            if json {
                context.print(try Formatting.json(info))
                return
            }
            context.print("workspace  \(info.path)")
            context.print("schema     v\(info.schemaVersion) (this loupe knows v\(info.knownSchemaVersion))")
            context.print(
                "file       \(Formatting.bytes(info.fileBytes)) + WAL \(Formatting.bytes(info.walBytes)); "
                    + "\(info.pageCount) pages of \(info.pageSize) B, \(info.freePages) free")
            context.print("journal    \(info.journalMode)")
            Self.printTables(info.tables, in: context)
        }

        /// A PostgreSQL workspace: the server, schema, the database's size and the rows per table.
        private func postgres(in context: CommandContext) throws {
            let info = try context.session.postgres().info()
            if json {
                context.print(try Formatting.json(info))
                return
            }
            context.print("workspace  \(info.url)")
            context.print("server     \(info.server)")
            context.print("schema     v\(info.schemaVersion) (this loupe knows v\(info.knownSchemaVersion))")
            context.print("database   \(Formatting.bytes(info.databaseBytes))")
            Self.printTables(info.tables, in: context)
        }

        private static func printTables(_ tables: [WorkspaceInfo.TableCount], in context: CommandContext) {
            let rowsWidth = tables.map { String($0.rows).count }.max() ?? 1
            let nameWidth = max(16, tables.map(\.name.count).max() ?? 0)
            context.print("tables")
            for table in tables {
                let rows = String(repeating: " ", count: rowsWidth - String(table.rows).count) + String(table.rows)
                context.print(
                    "  " + table.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  " + rows
                        + (table.rows == 1 ? " row" : " rows"))
            }
        }
    }

    struct Check: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run SQLite's integrity check and the foreign-key check.")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON instead of text.") var json = false

        func run(in context: CommandContext) throws {
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "integrity check"))
            if context.session.isPostgres {
                // The server checks its own pages (amcheck); what a stopped copy leaves is checked below.
                if !json { context.print("integrity     checked by the server (amcheck)") }
            } else {
                // Checked raw, not opened as a workspace: a file too damaged to open is what check is for.
                let result = try Workspace.check(path: context.session.path, busyTimeout: context.session.busyTimeout)
                if json {
                    context.print(try Formatting.json(result))
                } else {
                    context.print(
                        "integrity     "
                            + (result.integrity == ["ok"] ? "ok" : Formatting.count(result.integrity.count, "problem")))
                    for problem in result.integrity where problem != "ok" { context.print("  " + problem) }
                    context.print(
                        "foreign keys  "
                            + (result.foreignKeyViolations.isEmpty
                                ? "ok" : Formatting.count(result.foreignKeyViolations.count, "violation")))
                    for violation in result.foreignKeyViolations { context.print("  " + violation) }
                }
                if !result.isHealthy {
                    let file = context.session.displayPath
                    if !json { context.print(Check.repairHint(for: result, file: file)) }
                    throw CommandFailure("\(file) failed its check; copy the file before repairing it")
                }
            }
            try Self.checkWhole(context, json: json)
        }

        /// What a stopped `workspace copy` leaves: its mark, and traces with fewer spans than
        /// they count (their spans were still to come). Both are finished by running the copy again.
        static func checkWhole(_ context: CommandContext, json: Bool) throws {
            let database = try context.database(access: .read)
            let copying = try SettingsTables(database).setting(WorkspaceCopy.inProgressKey)
            let short = try database.readStatements { sql in
                try sql.execute(
                    "SELECT t.id AS id FROM traces t WHERE t.span_count > "
                        + "(SELECT count(*) FROM spans s WHERE s.trace_id = t.id) ORDER BY t.id", []
                ).compactMap { $0.integer("id") }
            }
            if !json {
                context.print("copy          " + (copying == nil ? "ok" : "unfinished"))
                context.print(
                    "traces        "
                        + (short.isEmpty
                            ? "ok"
                            : "\(Formatting.count(short.count, "trace")) without all their spans "
                                + "(first: \(short[0]))"))
            }
            guard copying != nil || !short.isEmpty else { return }
            let name = context.session.displayPath
            if let copying {
                throw CommandFailure(
                    "\(name) holds an unfinished workspace copy (it was stopped part-way: \(short.count) traces "
                        + "without all their spans); finish it by running the copy again: "
                        + UntrustedText.sanitized(copying))
            }
            throw CommandFailure(
                "\(name): \(Formatting.count(short.count, "trace")) have fewer spans than they count (first: trace "
                    + "\(short[0])); if it was filled by loupe workspace copy, run the copy again to finish it")
        }

        /// How to repair what the check found: REINDEX when only indexes are damaged, else
        /// SQLite's `.recover` into a new file.
        static func repairHint(for result: WorkspaceCheck, file: String) -> String {
            let quoted = "'" + file.replacingOccurrences(of: "'", with: "'\\''") + "'"
            let command: String
            if result.onlyIndexesDamaged {
                command =
                    "only indexes are damaged and the tables are intact; rebuild them: sqlite3 \(quoted) 'REINDEX'"
            } else {
                command =
                    "recover what can be read into a new file: sqlite3 \(quoted) .recover | sqlite3 recovered.sqlite, "
                    + "then run 'loupe --workspace recovered.sqlite workspace check'"
            }
            let installed = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
                FileManager.default.isExecutableFile(atPath: "\($0)/sqlite3")
            }
            return "repair        " + command
                + (installed ? "" : " (needs the sqlite3 command-line tool, 3.29 or later, which is not on PATH)")
        }
    }

    struct Vacuum: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rebuild the file without free pages and fold the WAL into it.")
        @OptionGroup var global: GlobalOptions

        func run(in context: CommandContext) throws {
            try WorkspaceCommand.fileOnly("vacuum", context, instead: "PostgreSQL's autovacuum reclaims its space")
            let workspace = try context.workspace()
            context.reporter.report(JobProgress(completed: 0, total: nil, detail: "vacuum"))
            let saved = try workspace.vacuum()
            let info = try workspace.info()
            context.print(
                "vacuumed \(context.session.displayPath): now \(Formatting.bytes(info.fileBytes)), \(Formatting.bytes(max(0, saved))) reclaimed"
            )
        }
    }
}
