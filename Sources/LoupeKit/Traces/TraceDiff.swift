import Foundation
import LoupeAgents
import LoupeBase
import LoupeStore

/// Two traces side by side: steps aligned by kind and tool name, each pair compared by what
/// the step produced (the model's answer, the tool's arguments and result), the first place they
/// part highlighted, and per-step token and latency deltas.
package struct TraceDiff: Hashable, Sendable {
    package enum Change: String, Hashable, Sendable, Codable {
        /// Same kind and tool, same output.
        case same
        /// Same kind and tool, different output (or arguments, or an evaluation's verdict).
        case changed
        /// Only in the left run / only in the right run.
        case onlyLeft = "only-left"
        case onlyRight = "only-right"
    }

    package struct Row: Hashable, Sendable {
        package var left: SpanRow?
        package var right: SpanRow?
        package var change: Change
        /// What each side produced, in one line (the model's answer or call, the tool's result).
        package var leftText = ""
        package var rightText = ""
        /// An evaluation step's verdict on each side (`C`, `I`, `0.5`, `true`), nil for other
        /// steps: the table shows both, so a changed score reads `C → I` without opening the row.
        package var leftVerdict: String?
        package var rightVerdict: String?

        /// `C → I` when the verdicts differ, `C` when they agree, the one side's alone when the
        /// other has none; nil when neither side is an evaluation.
        package var verdictChange: String? {
            switch (leftVerdict, rightVerdict) {
            case (nil, nil): return nil
            case (let l?, let r?): return l == r ? l : l + " → " + r
            case (let l?, nil): return l
            case (nil, let r?): return r
            }
        }

        /// Right minus left, input + output tokens; nil when either side has none.
        package var tokenDelta: Int? {
            guard let l = left.flatMap(Self.tokens), let r = right.flatMap(Self.tokens) else { return nil }
            return r - l
        }

        package var latencyDeltaNs: Int64? {
            guard let l = left.flatMap(Self.duration), let r = right.flatMap(Self.duration) else { return nil }
            return r - l
        }

        static func duration(_ span: SpanRow) -> Int64? { span.endNs.map { $0 - span.startNs } }

        static func tokens(_ span: SpanRow) -> Int? {
            span.inputTokens == nil && span.outputTokens == nil
                ? nil : (span.inputTokens ?? 0) + (span.outputTokens ?? 0)
        }
    }

    package var left: TraceSummary
    package var right: TraceSummary
    package var rows: [Row]
    /// The first row that is not `same`; nil when the runs did the same thing.
    package var firstDivergence: Int?

    /// Where one side forked from the other; nil when neither is the other's fork.
    package var forkPoint: ForkPoint?

    package var counts: [Change: Int] { rows.reduce(into: [:]) { $0[$1.change, default: 0] += 1 } }

    /// Where a fork left its parent: the span (`trace fork --at`), and for a token fork (`--at-token`)
    /// the generated token and what replaced it, as the fork's metadata recorded them.
    package struct ForkPoint: Hashable, Sendable {
        package var fork: Int64
        package var parent: Int64
        package var span: Int?
        package var token: Int?
        /// The token the parent's model chose there, and what the fork put in its place.
        package var original: String?
        package var replacement: String?

        package init(
            fork: Int64, parent: Int64, span: Int?, token: Int? = nil, original: String? = nil,
            replacement: String? = nil
        ) {
            self.fork = fork
            self.parent = parent
            self.span = span
            self.token = token
            self.original = original
            self.replacement = replacement
        }
    }

    /// "trace 15 forks trace 12 at span 3", with the token for a token fork (`, token #4 "a" →
    /// "b"`) when one side is a fork of the other; nil otherwise. Token texts are the model's
    /// output, made safe to print.
    package var forkLink: String? {
        guard let point = forkPoint else { return nil }
        var link = "trace \(point.fork) forks trace \(point.parent)" + (point.span.map { " at span \($0)" } ?? "")
        if let token = point.token {
            link += ", token #\(token)"
            if let original = point.original, let replacement = point.replacement {
                link += " " + AgentService.quoted(original) + " → " + AgentService.quoted(replacement)
            }
        }
        return link
    }
}

extension TraceService {
    package func diff(_ leftID: Int64, _ rightID: Int64) throws -> TraceDiff {
        let left = try load(leftID)
        let right = try load(rightID)
        let leftSteps = left.steps.map { left.spans[$0] }
        let rightSteps = right.steps.map { right.spans[$0] }
        func key(_ span: SpanRow) -> String {
            span.kind + "\u{1}" + (span.kind == "tool" ? span.toolName ?? span.name : "")
        }
        let aligned = TraceAlignment.align(leftSteps.map(key), rightSteps.map(key))
        let leftContent = try contents(leftID)
        let rightContent = try contents(rightID)
        let rows = aligned.map { pair -> TraceDiff.Row in
            let l = pair.left.map { leftSteps[$0] }
            let r = pair.right.map { rightSteps[$0] }
            var row = TraceDiff.Row(left: l, right: r, change: .same)
            row.leftText = l.flatMap { leftContent[$0.ordinal]?.summary } ?? ""
            row.rightText = r.flatMap { rightContent[$0.ordinal]?.summary } ?? ""
            row.leftVerdict = l.flatMap { leftContent[$0.ordinal]?.verdict }
            row.rightVerdict = r.flatMap { rightContent[$0.ordinal]?.verdict }
            guard let l, let r else {
                row.change = l == nil ? .onlyRight : .onlyLeft
                return row
            }
            let same = leftContent[l.ordinal]?.key == rightContent[r.ordinal]?.key && l.status == r.status
            row.change = same ? .same : .changed
            return row
        }
        return TraceDiff(
            left: left.summary, right: right.summary, rows: rows,
            firstDivergence: rows.firstIndex { $0.change != .same },
            forkPoint: try forkPoint(left.summary, right.summary))
    }

    /// Where one of the two traces forked from the other: its link (parent and span) and, for a
    /// token fork, the token its metadata names (`fork_token`, `fork_original`,
    /// `fork_replacement`, which `trace fork --at-token` records).
    private func forkPoint(_ left: TraceSummary, _ right: TraceSummary) throws -> TraceDiff.ForkPoint? {
        for (fork, parent) in [(right, left), (left, right)] where fork.parentTraceID == parent.id {
            var point = TraceDiff.ForkPoint(fork: fork.id, parent: parent.id, span: fork.forkOrdinal)
            if let stored = try tables.traceMetadata(trace: fork.id) {
                let metadata = try JSONValue.parse(
                    stored: stored, "metadata", row: "trace \(fork.id)", column: "metadata_json")
                point.token = metadata["fork_token"]?.int.map(Int.init)
                point.original = metadata["fork_original"]?.string
                point.replacement = metadata["fork_replacement"]?.string
            }
            return point
        }
        return nil
    }

    /// The attributes that hold an evaluation's verdict: an Inspect score's value, an OTel GenAI
    /// evaluation result, an OpenAI Agents guardrail's tripwire.
    private static let verdictAttributes = [
        "score.value", "gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label", "guardrail.triggered",
    ]

    /// What each span produced, for comparing steps: the output messages' text and tool calls,
    /// a tool's name, arguments, result and error, and an evaluation's verdict. The input (the
    /// conversation so far) is left out: after a divergence it always differs.
    private func contents(_ trace: Int64) throws -> [Int: (key: String, summary: String, verdict: String?)] {
        var result: [Int: (key: String, summary: String, verdict: String?)] = [:]
        for (ordinal, stored) in try tables.spanPayloads(trace: trace).enumerated() {
            let payload = try SpanDetail.payload(stored.payload, row: "trace \(trace), span \(ordinal)")
            let output = payload.output.map { message in
                message.text + message.toolCalls.map { "\u{2}\($0.name)(\($0.arguments))" }.joined()
            }
            let tool = payload.tool.map { "\($0.name)(\($0.arguments))=\($0.result ?? "")!\($0.error ?? "")" } ?? ""
            let said = payload.output.first.map { message in
                message.toolCalls.isEmpty
                    ? message.text
                    : "→ " + message.toolCalls.map { "\($0.name)(\($0.arguments))" }.joined(separator: ", ")
            }
            // A scorer's or guardrail's span has no output of its own: its verdict is what it
            // produced, so two runs scored differently differ here, and each side shows its value.
            let verdict = Self.verdictAttributes.compactMap { name in payload.attributes[name].map { (name, $0) } }
            let produced = payload.tool.map { $0.error.map { "✗ " + $0 } ?? $0.result ?? "" } ?? said ?? ""
            let summary =
                verdict.isEmpty
                ? produced
                : verdict.map { $0.1.text }.joined(separator: " · ") + (produced.isEmpty ? "" : "\n" + produced)
            result[ordinal] = (
                output.joined(separator: "\u{3}") + "\u{4}" + tool + "\u{5}"
                    + verdict.map { $0.0 + "=" + $0.1.compactJSON }.joined(separator: "\u{1}"),
                String(summary.split(whereSeparator: \.isNewline).joined(separator: " ⏎ ").prefix(300)),
                verdict.isEmpty
                    ? nil
                    : String(
                        verdict.map { $0.1.text }.joined(separator: " · ").split(whereSeparator: \.isNewline)
                            .joined(separator: " ").prefix(24))
            )
        }
        return result
    }
}
