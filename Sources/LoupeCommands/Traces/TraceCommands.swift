import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeOTLP
import LoupeReceiver
import LoupeStore

/// `loupe trace import|list|show`: what the Traces panel shows, on the shell.
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace", abstract: "Import agent traces and read them back.",
        subcommands: [Import.self, List.self, Show.self, Export.self, Diff.self, Fork.self, Tokens.self])

    struct Export: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Write a trace as OTLP/JSON (GenAI conventions), an OpenAI message list, or ATIF; or send traces on.",
            discussion: """
                otlp: one export request, ids kept when they are hex and hashed to hex otherwise. openai: \
                the conversation as the last model call saw it, its answer and the tool results after it. \
                atif: ATIF v1.6, one agent step per model call with its tool results as the observation.

                --to sends the traces as OTLP/HTTP protobuf (gzip) to another endpoint — a collector, \
                Phoenix, Langfuse, another `loupe serve` — as an SDK's exporter would: a URL without a path \
                gets /v1/traces. Headers come from --header Name=value and OTEL_EXPORTER_OTLP_HEADERS \
                (Langfuse: Authorization=Basic …); they are never printed or kept in the history. A busy \
                endpoint (429, 503) is retried after its Retry-After.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The traces' ids (one, unless --to).") var ids: [Int64]
        @Option(help: "otlp, openai or atif.") var format = "otlp"
        @Option(name: .shortAndLong, help: "Write here instead of standard output.") var output: String?
        @Option(help: "Send as OTLP/HTTP to this endpoint (http://HOST:4318).") var to: String?
        @Option(name: .customLong("header"), help: "A header to send with --to: Name=value (repeatable).")
        var headers: [String] = []
        @Option(help: "Spans a request, with --to.") var batch = 512

        func run(in context: CommandContext) throws {
            guard let format = TraceExport.Format(rawValue: format.lowercased()) else {
                throw CommandFailure("--format \(format): use otlp, openai or atif")
            }
            guard !ids.isEmpty else { throw CommandFailure("name a trace id") }
            let service = TraceService(tables: try context.traceTables(access: .read))
            func trace(_ id: Int64) throws -> Trace {
                do { return try service.trace(id) } catch let error as TraceImportError {
                    throw CommandFailure(error.description)
                }
            }
            if let to { return try send(try ids.map(trace), to: to, format: format, context: context) }
            guard ids.count == 1 else { throw CommandFailure("name one trace, or send several with --to URL") }
            let text = TraceExport.export(try trace(ids[0]), as: format).prettyJSON + "\n"
            guard let output else { return context.print(String(text.dropLast())) }
            try text.write(toFile: output, atomically: true, encoding: .utf8)
            context.print("wrote trace \(ids[0]) as \(format.rawValue) to \(output)")
        }

        private func send(_ traces: [Trace], to url: String, format: TraceExport.Format, context: CommandContext) throws
        {
            guard format == .otlp else {
                throw CommandFailure("--to sends OTLP; leave out --format \(format.rawValue)")
            }
            guard output == nil else { throw CommandFailure("--to and --output: choose one") }
            guard batch > 0 else { throw CommandFailure("--batch \(batch): use at least 1") }
            let exporter: OTLPExporter
            do {
                let environment = ProcessInfo.processInfo.environment["OTEL_EXPORTER_OTLP_HEADERS"] ?? ""
                exporter = try OTLPExporter(
                    url: url,
                    headers: try OTLPExporter.headers(fromEnvironment: environment) + headers.map(OTLPExporter.header))
            } catch {
                throw CommandFailure(error.description)
            }
            var spans = 0
            var rejected: Int64 = 0
            for (id, trace) in zip(ids, traces) {
                let requests: [Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest]
                do {
                    requests = try OTLPEncoding.requests(TraceExport.export(trace, as: .otlp), spansEach: batch)
                } catch {
                    throw CommandFailure("trace \(id): \(error)")
                }
                for request in requests {
                    try context.reporter.checkCancellation()
                    let sent: OTLPExporter.Sent
                    do { sent = try awaitFromSync { try await exporter.send(request) } } catch {
                        let done = spans > 0 ? " (\(Formatting.count(spans, "span")) sent before it)" : ""
                        throw CommandFailure(UntrustedText.sanitized("\(error)") + done)
                    }
                    rejected += sent.rejectedSpans
                    spans += request.resourceSpans.reduce(0) { $0 + $1.scopeSpans.reduce(0) { $0 + $1.spans.count } }
                    if !sent.message.isEmpty {
                        context.print("the endpoint said: " + UntrustedText.sanitized(sent.message))
                    }
                }
            }
            let host = exporter.endpoint.host ?? url
            let port = exporter.endpoint.port.map { ":\($0)" } ?? ""
            context.print(
                "sent \(Formatting.count(traces.count, "trace")), \(Formatting.count(spans, "span")) to "
                    + "\(exporter.endpoint.scheme ?? "http")://\(host)\(port)\(exporter.endpoint.path)"
                    + (rejected > 0 ? " — \(rejected) rejected" : ""))
        }
    }

    struct Import: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Import trace files: OTLP/JSON (GenAI or OpenInference), OpenAI message lists, Inspect logs, "
                + "SWE-agent and mini-swe-agent trajectories, OpenAI Agents SDK exports, Loupe's own.",
            discussion: """
                The format is found from each file's name and content. Every file is read before anything \
                is written, and all of them land in one transaction: a malformed file names its line or \
                member and field, and nothing is imported. Importing the same trace again changes nothing; \
                a trace whose content changed is replaced.
                """)

        @OptionGroup var global: GlobalOptions
        @OptionGroup var input: InputOptions
        @Argument(help: "Trace files (- for standard input).") var files: [String]

        func run(in context: CommandContext) throws {
            guard !files.isEmpty else { throw CommandFailure("name at least one trace file") }
            let report: TraceService.ImportReport
            do {
                let service = TraceService(tables: try context.traceTables())
                report = try Interrupt.importing(context, "traces") {
                    try service.importFiles(files, reporter: context.reporter)
                }
            } catch let error as TraceImportError {
                throw CommandFailure("\(UntrustedText.sanitized(error.description)); nothing was imported")
            }
            let c = report.counts
            context.print(
                "\(Formatting.count(report.files, "file")): \(Formatting.count(report.traces, "trace")), "
                    + "\(Formatting.count(report.spans, "span")) — \(c.added) added, \(c.replaced) replaced, "
                    + "\(c.unchanged) unchanged")
        }
    }

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Every trace with its totals.")

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let traces = try TraceService(tables: try context.traceTables(access: .read)).list()
            if json { return context.print(try Formatting.json(traces)) }
            guard !traces.isEmpty else { return context.print("no traces yet: loupe trace import FILE") }
            context.print("   id  format     steps  spans  errors   duration    tokens in/out       cost  name")
            for t in traces {
                let tokens =
                    t.inputTokens == nil && t.outputTokens == nil
                    ? "—" : "\(t.inputTokens.map(String.init) ?? "—")/\(t.outputTokens.map(String.init) ?? "—")"
                context.print(
                    String(format: "%5lld  ", t.id) + t.format.padding(toLength: 9, withPad: " ", startingAt: 0)
                        + String(format: " %6d %6d %7d  ", t.stepCount, t.spanCount, t.errorCount)
                        + TraceText.duration(t.timed ? t.durationNs : nil).leftPadded(to: 9) + "  "
                        + tokens.leftPadded(to: 15) + "  " + TraceText.cost(t.cost).leftPadded(to: 9) + "  "
                        + TextWidth.truncate(UntrustedText.sanitized(t.name), toColumns: 50))
            }
        }
    }

    struct Show: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "A trace's spans as a tree: kind, name, start, duration, tokens, cost and status.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The trace's id (loupe trace list).") var id: Int64
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let loaded: TraceService.Loaded
            do {
                loaded = try TraceService(tables: try context.traceTables(access: .read)).load(id)
            } catch let error as TraceImportError {
                throw CommandFailure(error.description)
            }
            if json {
                struct Shown: Encodable {
                    var trace: TraceSummary
                    var spans: [SpanRow]
                    var steps: [Int]
                }
                return context.print(
                    try Formatting.json(Shown(trace: loaded.summary, spans: loaded.spans, steps: loaded.steps)))
            }
            let t = loaded.summary
            context.print(
                "trace \(t.id) (\(t.format)): \(UntrustedText.sanitized(t.name)) — \(Formatting.count(t.stepCount, "step")), "
                    + "\(Formatting.count(t.errorCount, "error")), \(TraceText.duration(t.timed ? t.durationNs : nil)), "
                    + "cost \(TraceText.cost(t.cost))")
            for score in loaded.scores {
                context.print(
                    "  score \(UntrustedText.sanitized(score.scorer)) = \(UntrustedText.sanitized(try score.value.get().compactJSON))"
                        + (score.answer.map {
                            "  (answer: \(UntrustedText.sanitized($0.replacingOccurrences(of: "\n", with: " "))))"
                        } ?? ""))
            }
            context.print("  start      duration  kind       tokens in/out       cost  status  span")
            for (span, depth) in zip(loaded.spans, loaded.depths) {
                let start = t.timed ? TraceText.duration(span.startNs - t.startedNs) : "#\(span.ordinal)"
                let duration = t.timed ? TraceText.duration(span.endNs.map { $0 - span.startNs }) : "—"
                let tokens =
                    span.inputTokens == nil && span.outputTokens == nil
                    ? "" : "\(span.inputTokens.map(String.init) ?? "—")/\(span.outputTokens.map(String.init) ?? "—")"
                context.print(
                    "  " + start.leftPadded(to: 8) + "  " + duration.leftPadded(to: 8) + "  "
                        + span.kind.padding(toLength: 9, withPad: " ", startingAt: 0) + "  " + tokens.leftPadded(to: 13)
                        + "  "
                        + (span.kind == "llm" && (span.cost != nil || span.inputTokens != nil)
                        ? TraceText.cost(span.cost) : "").leftPadded(to: 9)
                        + "  " + span.status.padding(toLength: 6, withPad: " ", startingAt: 0) + "  "
                        + String(repeating: "  ", count: min(depth, 12))
                        + TextWidth.truncate(UntrustedText.sanitized(span.name), toColumns: 60)
                        + (span.statusMessage.map { "  ✗ " + UntrustedText.sanitized($0) } ?? ""))
            }
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }

    func padded(to width: Int) -> String {
        count >= width ? String(prefix(width - 1)) + "…" : self + String(repeating: " ", count: width - count)
    }
}
