import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupePostgres
import LoupeStore

extension BenchCommand {
    struct Team: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "team",
            abstract: "A workspace on PostgreSQL against one on SQLite: receiver ingest, the trace list, copy.",
            discussion: """
                Needs a PostgreSQL server whose URL's user may create databases (scripts/bench/team.sh \
                starts one); each phase gets a fresh database, dropped at the end. Ingest: `loupe serve` \
                into a SQLite file and into PostgreSQL, each as fast as it acknowledges OTLP/HTTP protobuf \
                requests of GenAI spans (512 a request, eight connections), as `bench receive` sends them. \
                List: --spans spans in traces of 50 (model calls, tool calls, an agent span) stored on both \
                backends, then the Traces panel's list (`TraceService.list`: prices, each trace's model \
                usage, the traces) timed five times; EXPLAIN ANALYZE of each of its queries on PostgreSQL. \
                Copy: `workspace copy` of a SQLite workspace (--copy, default .demo/demo.sqlite) into \
                PostgreSQL, in MB of the file a second. Eval workers: scripts/bench/team-evals.sh.
                """)
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "A PostgreSQL server: postgres://USER@HOST:PORT/DATABASE (the user creates databases).")
        var postgres: String
        @Option(help: "Seconds of each ingest run.") var seconds = 8.0
        @Option(help: "Spans stored for the list query.") var spans = 1_000_000
        @Option(help: "The SQLite workspace copied into PostgreSQL.") var copy = ".demo/demo.sqlite"
        @Flag(help: "Print JSON.") var json = false

        struct Ingest: Encodable {
            var backend: String
            var spansPerSecond: Double
            var acknowledgedSpans: Int
            var storedSpans: Int
            var refusedRequests: Int
        }

        struct ListQuery: Encodable {
            var backend: String
            var traces: Int
            var spans: Int
            var fillSpansPerSecond: Double
            var listMilliseconds: Stats
            var summariesMilliseconds: Stats
            var usageMilliseconds: Stats
            /// The panel's first view: the first 500 traces, priced, and the count.
            var firstViewMilliseconds: Stats
            /// The panel's list read again after one trace changed (what another process's commit
            /// asks for): only the traces changed since its last read.
            var againMilliseconds: Stats
        }

        struct Copy: Encodable {
            var source: String
            var megabytes: Double
            var rows: Int
            var seconds: Double
            var megabytesPerSecond: Double
        }

        struct Result: Encodable {
            var server: String
            var ingest: [Ingest]
            /// PostgreSQL's spans/s over SQLite's.
            var ingestRatio: Double
            var list: [ListQuery]
            /// EXPLAIN ANALYZE of the list's queries on PostgreSQL, by query.
            var explain: [String: [String]]
            var copy: Copy?
        }

        func run(in context: CommandContext) throws {
            let admin = try PostgresStore.connect(try PostgresURL(postgres))
            defer { admin.close() }
            var made: [String] = []
            defer {
                for database in made { _ = try? admin.execute("DROP DATABASE IF EXISTS \(database)") }
            }
            /// A fresh database on the server, and its URL (with the given URL's credentials).
            func fresh(_ label: String) throws -> String {
                let name = "loupe_bench_\(label)_\(UInt32.random(in: 0...UInt32.max))"
                try admin.execute("CREATE DATABASE \(name)")
                made.append(name)
                var components = URLComponents(string: postgres)!
                components.path = "/" + name
                return components.string!
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-bench-team-\(UUID())")
                .path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let server = (try admin.execute("SHOW server_version").first?.text("server_version")).map {
                "PostgreSQL \($0)"
            }

            // Ingest through `loupe serve`, the same load into each backend.
            var ingest: [Ingest] = []
            for (backend, workspace) in [("sqlite", directory + "/ingest.sqlite"), ("postgres", try fresh("ingest"))] {
                ingest.append(try Self.ingest(backend, workspace: workspace, seconds: seconds))
            }

            // The list query on --spans spans.
            let postgresList = try PostgresStore.open(try PostgresURL(try fresh("list")))
            defer { postgresList.close() }
            let sqliteList = try Workspace(path: directory + "/list.sqlite")
            let list = [
                try Self.listQuery("sqlite", TraceTables(sqliteList), spans: spans),
                try Self.listQuery("postgres", TraceTables(postgresList), spans: spans),
            ]
            var explain: [String: [String]] = [:]
            for (name, sql) in TraceTables.listQueries {
                explain[name] = try postgresList.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql).compactMap {
                    $0.values.first.flatMap { if case .text(let line) = $0 { line } else { nil } }
                }
            }

            // Copy a workspace file into PostgreSQL.
            var copied: Copy?
            if FileManager.default.fileExists(atPath: copy) {
                let destination = try PostgresStore.open(try PostgresURL(try fresh("copy")))
                defer { destination.close() }
                let source = try Workspace(path: copy, access: .read)
                try source.checkpoint()
                let bytes =
                    (try FileManager.default.attributesOfItem(atPath: copy)[.size] as? NSNumber)?.doubleValue ?? 0
                let report = try WorkspaceCopy.copy(from: .sqlite(source), to: .postgres(destination))
                copied = Copy(
                    source: copy, megabytes: bytes / 1e6, rows: report.tables.reduce(0) { $0 + $1.copied },
                    seconds: report.seconds, megabytesPerSecond: bytes / 1e6 / report.seconds)
            }

            let result = Result(
                server: server ?? "PostgreSQL", ingest: ingest,
                ingestRatio: ingest[1].spansPerSecond / ingest[0].spansPerSecond, list: list, explain: explain,
                copy: copied)
            if json { return context.print(try Formatting.json(result)) }
            context.print("\(result.server), this machine, load \(Self.loadAverage())")
            for run in ingest {
                context.print(
                    "ingest into \(run.backend.padding(toLength: 8, withPad: " ", startingAt: 0))  "
                        + String(
                            format: "%8.0f spans/s (%d acknowledged, %d stored, %d refused)", run.spansPerSecond,
                            run.acknowledgedSpans, run.storedSpans, run.refusedRequests))
            }
            context.print(String(format: "ingest PostgreSQL ÷ SQLite  %.2f×", result.ingestRatio))
            for run in list {
                context.print(
                    "list on \(run.backend.padding(toLength: 8, withPad: " ", startingAt: 0))  "
                        + String(
                            format: "%d traces, %d spans (stored at %.0f spans/s): first view (%d traces) %.1f ms, "
                                + "whole list %.1f ms (summaries %.1f, usage %.1f), again after a trace changed %.1f ms, "
                                + "median of 5",
                            run.traces, run.spans, run.fillSpansPerSecond, TracesBrowser.firstPage,
                            run.firstViewMilliseconds.median, run.listMilliseconds.median,
                            run.summariesMilliseconds.median, run.usageMilliseconds.median,
                            run.againMilliseconds.median))
            }
            for (name, lines) in explain.sorted(by: { $0.key < $1.key }) {
                context.print("EXPLAIN ANALYZE \(name) (PostgreSQL):")
                for line in lines { context.print("  " + line) }
            }
            if let copied {
                context.print(
                    "workspace copy \(copied.source) → PostgreSQL: "
                        + String(
                            format: "%.1f MB, %d rows in %.2f s = %.1f MB/s", copied.megabytes, copied.rows,
                            copied.seconds, copied.megabytesPerSecond))
            } else {
                context.print("workspace copy: \(copy) is not there (scripts/setup makes it); not timed")
            }
        }

        private static func loadAverage() -> String {
            ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?").split(separator: " ").first.map(
                String.init) ?? "?"
        }

        /// `loupe serve` into `workspace` under `bench receive`'s sustained load.
        private static func ingest(_ backend: String, workspace: String, seconds: Double) throws -> Ingest {
            let server = try ServerProcess(workspace: workspace)
            defer { server.stopIfRunning() }
            let generator = Generator(batch: 512)
            let (counts, elapsed) = try Receive.sustain(
                URL(string: server.endpoint)!, generator, connections: 8, seconds: seconds)
            server.stop()
            let database: any SQLDatabase =
                PostgresURL.isURL(workspace)
                ? try PostgresStore.open(try PostgresURL(workspace)) : try Workspace(path: workspace)
            let stored = try TraceTables(database).traceSummaries().reduce(0) { $0 + $1.spanCount }
            return Ingest(
                backend: backend, spansPerSecond: Double(counts.acknowledged * 512) / elapsed,
                acknowledgedSpans: counts.acknowledged * 512, storedSpans: stored, refusedRequests: counts.refused)
        }

        /// Stores `spans` spans in traces of 50, then times the Traces panel's list.
        private static func listQuery(_ backend: String, _ tables: TraceTables, spans: Int) throws -> ListQuery {
            let perTrace = 50
            let traces = max(1, spans / perTrace)
            let started = ContinuousClock.now
            for first in stride(from: 0, to: traces, by: 500) {
                let batch = (first..<min(traces, first + 500)).map { Self.trace($0, spans: perTrace) }
                _ = try tables.importTraces(batch)
            }
            let fill = Double(traces * perTrace) / (ContinuousClock.now - started).seconds
            func time(_ body: () throws -> Void) rethrows -> Stats {
                var times: [Double] = []
                for _ in 0..<5 {
                    let start = ContinuousClock.now
                    try body()
                    times.append((ContinuousClock.now - start).seconds * 1000)
                }
                return Stats(times)
            }
            let service = TraceService(tables: tables)
            // The panel's port keeps its list: after its first read, each read after a commit
            // reads what the commit changed (here one trace's row, as a killed agent's is marked).
            let browser = TracesBrowser(tables: tables)
            _ = try browser.list()
            var again: [Double] = []
            for round in 0..<5 {
                _ = try tables.database.writeStatements { sql in
                    try sql.execute(
                        "UPDATE traces SET error_count = error_count + 1 WHERE id = ?", [.integer(Int64(round + 1))])
                }
                let start = ContinuousClock.now
                _ = try browser.list()
                again.append((ContinuousClock.now - start).seconds * 1000)
            }
            return ListQuery(
                backend: backend, traces: traces, spans: traces * perTrace, fillSpansPerSecond: fill,
                listMilliseconds: try time { _ = try service.list() },
                summariesMilliseconds: try time { _ = try tables.traceSummaries() },
                usageMilliseconds: try time { _ = try tables.modelUsage() },
                firstViewMilliseconds: try time { _ = try service.list(first: TracesBrowser.firstPage) },
                againMilliseconds: Stats(again))
        }

        /// An agent run of `spans` spans: an agent span, then model and tool calls in turn.
        private static func trace(_ n: Int, spans: Int) -> NewTrace {
            let records = (0..<spans).map { ordinal -> NewTrace.SpanRecord in
                let kind = ordinal == 0 ? "agent" : ordinal % 2 == 1 ? "llm" : "tool"
                let row = SpanRow(
                    ordinal: ordinal, spanID: String(format: "%016x", ordinal + 1),
                    parentSpanID: ordinal == 0 ? nil : String(format: "%016x", 1), kind: kind,
                    name: kind == "llm" ? "chat gpt-4o-mini" : kind == "tool" ? "execute_tool search" : "invoke_agent",
                    startNs: Int64(ordinal) * 1_000_000, endNs: Int64(ordinal) * 1_000_000 + 900_000, status: "ok",
                    statusMessage: nil, model: kind == "llm" ? "gpt-4o-mini" : nil,
                    inputTokens: kind == "llm" ? 400 + ordinal : nil, outputTokens: kind == "llm" ? 40 : nil,
                    cacheReadTokens: nil, cacheWriteTokens: nil, reasoningTokens: nil, cost: nil,
                    toolName: kind == "tool" ? "search" : nil)
                return NewTrace.SpanRecord(row: row, payloadJSON: "{}", rawZstd: nil)
            }
            let llm = records.filter { $0.row.kind == "llm" }
            return NewTrace(
                summary: TraceSummary(
                    id: 0, externalID: String(format: "%032x", n + 1), format: "otlp", sourceFile: "bench",
                    name: "invoke_agent bench-\(n)", startedNs: 0, endedNs: Int64(spans) * 1_000_000, timed: true,
                    spanCount: spans, stepCount: spans - 1, errorCount: 0,
                    inputTokens: llm.reduce(0) { $0 + ($1.row.inputTokens ?? 0) }, outputTokens: llm.count * 40,
                    cost: nil, parentTraceID: nil, forkOrdinal: nil, importedAt: Date()),
                metadataJSON: "{}", contentHash: "bench-\(n)", spans: records, scores: [])
        }
    }
}

extension Duration {
    fileprivate var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
