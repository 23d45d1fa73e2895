import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore

extension TraceCommand {
    struct Diff: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare two traces step by step.",
            discussion: """
                Steps pair up by kind and tool name (a longest common subsequence, so an extra step in one \
                run shows as an insertion). Each row: = same output, ≠ changed, − only in the first trace, \
                + only in the second; the first divergence is marked ▶; token and latency deltas are the \
                second minus the first.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The first (left) trace's id.") var left: Int64
        @Argument(help: "The second (right) trace's id.") var right: Int64
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let diff: TraceDiff
            do { diff = try TraceService(tables: try context.traceTables(access: .read)).diff(left, right) } catch let
                error
                as TraceImportError
            { throw CommandFailure(error.description) }
            if json { return context.print(JSONValue.object(Self.json(diff)).prettyJSON) }
            let counts = diff.counts
            context.print(
                "trace \(left) ↔ trace \(right): \(counts[.same, default: 0]) same, \(counts[.changed, default: 0]) changed, "
                    + "\(counts[.onlyLeft, default: 0]) only in \(left), \(counts[.onlyRight, default: 0]) only in \(right)"
                    + (diff.firstDivergence.map { " — first divergence at row \($0 + 1)" } ?? " — no divergence"))
            let timed = diff.left.timed && diff.right.timed
            // A scorer's verdict on each side (`C → I`) when the runs were scored.
            let scored = diff.rows.contains { $0.verdictChange != nil }
            context.print(
                "  row    left                          right                         "
                    + (scored ? " score       " : "") + " Δ tokens   Δ latency")
            for (index, row) in diff.rows.enumerated() {
                let mark = index == diff.firstDivergence ? "▶" : " "
                let symbol = ["same": "=", "changed": "≠", "only-left": "−", "only-right": "+"][row.change.rawValue]!
                let tokens = row.tokenDelta.map { ($0 > 0 ? "+" : "") + String($0) } ?? ""
                var latency = ""
                if timed, let delta = row.latencyDeltaNs, delta != 0 {
                    let sign = delta > 0 ? "+" : delta < 0 ? "−" : ""
                    latency = sign + TraceText.duration(abs(delta))
                }
                context.print(
                    "\(mark)\(String(index + 1).leftPadded(to: 4)) \(symbol)  "
                        + Self.cell(row.left).padded(to: 30) + " " + Self.cell(row.right).padded(to: 30) + " "
                        + (scored ? UntrustedText.sanitized(row.verdictChange ?? "").padded(to: 12) + " " : "")
                        + tokens.leftPadded(to: 9) + "  " + latency.leftPadded(to: 10))
            }
        }

        static func cell(_ span: SpanRow?) -> String {
            guard let span else { return "·" }
            let name = span.kind == "tool" ? (span.toolName ?? span.name) : span.name
            return UntrustedText.sanitized(
                "#\(span.ordinal) \(span.kind) \(name)" + (span.status == "error" ? " ✗" : ""))
        }

        static func json(_ diff: TraceDiff) -> [String: JSONValue] {
            func side(_ span: SpanRow?) -> JSONValue {
                guard let span else { return .null }
                return .object([
                    "ordinal": .number(Double(span.ordinal)), "kind": .string(span.kind),
                    "name": .string(span.toolName ?? span.name), "status": .string(span.status),
                ])
            }
            return [
                "left": .number(Double(diff.left.id)), "right": .number(Double(diff.right.id)),
                "first_divergence": diff.firstDivergence.map { .number(Double($0)) } ?? .null,
                "rows": .array(
                    diff.rows.map { row in
                        .object([
                            "change": .string(row.change.rawValue), "left": side(row.left), "right": side(row.right),
                            "left_verdict": row.leftVerdict.map(JSONValue.string) ?? .null,
                            "right_verdict": row.rightVerdict.map(JSONValue.string) ?? .null,
                            "token_delta": row.tokenDelta.map { .number(Double($0)) } ?? .null,
                            "latency_delta_ns": row.latencyDeltaNs.map { .number(Double($0)) } ?? .null,
                        ])
                    }),
            ]
        }
    }

    struct Fork: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fork a trace at a span: change a tool result or a message, and continue with a provider.",
            discussion: """
                --at is the span's ordinal, as `trace show` lists it (#n) and the panel's tree shows. At a tool \
                span, --result replaces what the tool returned and the model's turn goes on from there; at a \
                model call, --message replaces the last user message it was sent and the call runs again. \
                The fork is a new trace linked to its parent; `trace diff PARENT FORK` compares them.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The trace to fork.") var id: Int64
        @Option(help: "The span to fork at (its ordinal).") var at: Int
        @Option(help: "The tool's new result (at a tool span).") var result: String?
        @Option(help: "The new user message (at a model call).") var message: String?
        @OptionGroup var options: ProviderOptions

        func run(in context: CommandContext) throws {
            let edit: AgentService.ForkEdit
            switch (result, message) {
            case (let result?, nil): edit = .toolResult(result)
            case (nil, let message?): edit = .userMessage(message)
            default:
                throw CommandFailure("give one change: --result TEXT (a tool span) or --message TEXT (a model call)")
            }
            let service = AgentService(database: try context.database(), models: context.session.models)
            var printed: Int?
            let forked: (id: Int64, trace: Trace)
            do {
                forked = try service.fork(
                    id, at: at, edit: edit, provider: try options.provider(service), limits: options.limits,
                    reporter: context.reporter,
                    onStep: { _, trace in
                        if printed == nil { printed = trace.spans.count }
                        while printed! < trace.spans.count {
                            if let line = AgentCommand.Run.describe(trace.spans[printed!]) { context.print(line) }
                            printed! += 1
                        }
                    })
            } catch let error as AgentToolError {
                throw CommandFailure(error.description)
            } catch let error as TraceImportError {
                throw CommandFailure(error.description)
            }
            let root = forked.trace.spans[0]
            if let answer = root.output.first?.text { context.print("answer: " + UntrustedText.sanitized(answer)) }
            if case .error(let why) = root.status { context.print("✗ " + UntrustedText.sanitized(why)) }
            context.print("fork: trace \(forked.id) (trace \(id) at span \(at)) — loupe trace diff \(id) \(forked.id)")
        }
    }
}
