import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeModels
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
            // Where one run forked from the other, as the TUI's diff names it.
            if let link = diff.forkLink { context.print("  ↳ " + link) }
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
                "fork": diff.forkLink.map(JSONValue.string) ?? .null,
                "fork_point": diff.forkPoint.map { point in
                    .object([
                        "fork": .number(Double(point.fork)), "parent": .number(Double(point.parent)),
                        "span": point.span.map { .number(Double($0)) } ?? .null,
                        "token": point.token.map { .number(Double($0)) } ?? .null,
                        "original": point.original.map(JSONValue.string) ?? .null,
                        "replacement": point.replacement.map(JSONValue.string) ?? .null,
                    ])
                } ?? .null,
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
            abstract:
                "Fork a trace at a span (change a tool result or a message) or at a generated token, and continue.",
            discussion: """
                --at is the span's ordinal, as `trace show` lists it (#n) and the panel's tree shows. At a tool \
                span, --result replaces what the tool returned and the model's turn goes on from there; at a \
                model call, --message replaces the last user message it was sent and the call runs again.

                --at-token SPAN:INDEX forks a local model's step (loupe agent run --provider local) at one of \
                its generated tokens (INDEX from 0, as `trace tokens` numbers them): --choose K puts the K-th \
                alternative there (from 1, most likely first; 2 is usually the second-best), --text replaces \
                the answer from there with the text. SmolLM2 reads the step's recorded prompt, is made to \
                write the step's tokens before INDEX and then the choice, and goes on with the step's \
                temperature and seed; the run then continues from that step with the local model. A \
                choice the step's tool-call grammar refuses is still written: the model goes on without \
                the grammar from there, and the fork says so (⚠ here, grammar_left_at in --json, \
                loupe.fork.grammar_left_at on the step).

                The fork is a new trace linked to its parent; `trace diff PARENT FORK` compares them.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The trace to fork.") var id: Int64
        @Option(help: "The span to fork at (its ordinal).") var at: Int?
        @Option(help: "The tool's new result (at a tool span).") var result: String?
        @Option(help: "The new user message (at a model call).") var message: String?
        @Option(
            name: .customLong("at-token"),
            help: "A local model's generated token to fork at: SPAN:INDEX (span ordinal, token index from 0).")
        var atToken: String?
        @Option(help: "At --at-token: the alternative to put there, from 1 (most likely first).") var choose: Int?
        @Option(help: "At --at-token: the text that replaces the answer from that token on.") var text: String?
        @Flag(help: "Print the fork as JSON (its id, the parent, where it forked and its answer).") var json = false
        @OptionGroup var options: ProviderOptions

        func run(in context: CommandContext) throws {
            let service = AgentService(database: try context.database(), models: context.session.models)
            var printed: Int?
            let onStep: (Int64, Trace) -> Void = { _, trace in
                guard !json else { return }
                if printed == nil { printed = trace.spans.count }
                while printed! < trace.spans.count {
                    if let line = AgentCommand.Run.describe(trace.spans[printed!]) { context.print(line) }
                    printed! += 1
                }
            }
            let forked: (id: Int64, trace: Trace)
            var summary: String
            var link: [String: JSONValue]
            var grammarLeft: String?
            do {
                if let atToken {
                    let (ordinal, index) = try Self.tokenPosition(atToken)
                    let replacement: AgentService.TokenReplacement
                    switch (choose, text) {
                    case (let k?, nil): replacement = .alternative(k)
                    case (nil, let text?): replacement = .text(text)
                    default:
                        throw CommandFailure("at a token, give one choice: --choose K (an alternative) or --text TEXT")
                    }
                    guard at == nil, result == nil, message == nil else {
                        throw CommandFailure(
                            "--at-token forks at a token: --at, --result and --message are for a span fork")
                    }
                    let made = try service.fork(
                        id, at: ordinal, token: index, replacement: replacement, limits: options.overrides,
                        reporter: context.reporter, onStep: onStep)
                    forked = (made.id, made.trace)
                    summary =
                        "trace \(id) at span \(ordinal), token \(index): "
                        + "\(AgentService.quoted(made.plan.original)) → \(AgentService.quoted(made.plan.replacement))"
                    link = [
                        "span": .number(Double(ordinal)), "token": .number(Double(index)),
                        "choice": .string(replacement.label), "original": .string(made.plan.original),
                        "replacement": .string(made.plan.replacement),
                    ]
                    // A forced token the tool-call grammar refuses is honoured and the model goes on
                    // unconstrained: the forked step says so, and so does the command.
                    let step = made.trace.spans.first { $0.attributes["loupe.fork.token_index"] != nil }
                    if let step, let at = step.attributes[LocalModelProvider.grammarLeftAttribute] {
                        link["grammar_left_at"] = at
                        link["grammar_left"] = step.attributes["loupe.fork.grammar_left"] ?? .null
                        grammarLeft = step.attributes["loupe.fork.grammar_left"]?.string
                    }
                } else {
                    guard let at else {
                        throw CommandFailure("give where to fork: --at SPAN, or --at-token SPAN:INDEX")
                    }
                    guard choose == nil, text == nil else {
                        throw CommandFailure("--choose and --text go with --at-token SPAN:INDEX")
                    }
                    let edit: AgentService.ForkEdit
                    switch (result, message) {
                    case (let result?, nil): edit = .toolResult(result)
                    case (nil, let message?): edit = .userMessage(message)
                    default:
                        throw CommandFailure(
                            "give one change: --result TEXT (a tool span) or --message TEXT (a model call)")
                    }
                    forked = try service.fork(
                        id, at: at, edit: edit, provider: try options.provider(service), limits: options.overrides,
                        reporter: context.reporter, onStep: onStep)
                    summary = "trace \(id) at span \(at)"
                    link = ["span": .number(Double(at))]
                }
            } catch let error as AgentToolError {
                throw CommandFailure(error.description)
            } catch let error as TraceImportError {
                throw CommandFailure(error.description)
            } catch let error as ModelError {
                throw CommandFailure(error.description)
            }
            let root = forked.trace.spans[0]
            let answer = root.output.first?.text
            var failure: String?
            if case .error(let why) = root.status { failure = why }
            if json {
                link["parent"] = .number(Double(id))
                return context.print(
                    JSONValue.object([
                        "fork": .number(Double(forked.id)), "forked_from": .object(JSONObject(link)),
                        "answer": answer.map(JSONValue.string) ?? .null,
                        "error": failure.map(JSONValue.string) ?? .null,
                    ]).prettyJSON)
            }
            if let answer { context.print("answer: " + UntrustedText.sanitized(answer)) }
            if let failure { context.print("✗ " + UntrustedText.sanitized(failure)) }
            if let grammarLeft { context.print("⚠ " + UntrustedText.sanitized(grammarLeft)) }
            context.print("fork: trace \(forked.id) (\(summary)) — loupe trace diff \(id) \(forked.id)")
        }

        /// `SPAN:INDEX` as `--at-token` takes it: a span ordinal and a token index, both whole
        /// numbers (the span from 1, the token from 0).
        static func tokenPosition(_ text: String) throws -> (span: Int, token: Int) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let span = Int(parts[0]), let token = Int(parts[1]), span >= 1, token >= 0 else {
                throw CommandFailure(
                    "--at-token \(UntrustedText.sanitized(text)): expected SPAN:INDEX, a span ordinal (from 1) and "
                        + "a token index (from 0), e.g. 3:12")
            }
            return (span, token)
        }
    }
}
