import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension TracesPanel {
    /// Draws the view on show: the diff over the rest, else the open trace (with the fork line
    /// while one is edited), else the sessions or the list.
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        if let diffView {
            diffView.render(into: &frame, area: area, context: context)
            return
        }
        if let open = traceView {
            let trace = open.trace
            let inner = Block(
                title: "Traces · \(UntrustedText.sanitized(trace.summary.name))",
                trailingTitle: (live.contains(trace.summary.id)
                    ? "● live" + (open.step >= trace.steps.count - 1 ? " · following" : "") + " · " : "")
                    + "step \(trace.steps.isEmpty ? 0 : open.step + 1)/\(trace.steps.count)"
                    + (open.raw ? " · raw" : ""),
                focused: context.focused
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 20, inner.height > 4 else { return }
            // SmolLM2's attention or lens at a token (`a`, `l`) takes the trace's place until closed.
            if let tokenInside {
                tokenInside.render(into: &frame, area: inner, theme: theme)
                return
            }
            open.render(into: &frame, area: inner, theme: theme, zoomed: context.zoomed)
            forkEditor?.render(
                into: &frame, area: inner, spanKind: open.currentOrdinal.map { trace.spans[$0].kind } ?? "",
                model: trace.spans.lazy.compactMap(\.model).first, theme: theme)
            return
        }
        if showingSessions {
            sessionsView.render(into: &frame, area: area, context: context, sessions: sessions, live: live)
            return
        }
        listView.render(into: &frame, area: area, context: context, marked: marked, error: error)
    }

    package static func tokens(_ input: Int?, _ output: Int?) -> String {
        input == nil && output == nil ? "—" : "\(input.map(String.init) ?? "—")/\(output.map(String.init) ?? "—")"
    }

    /// The header, then the span tree beside the step's detail; zoomed (`z`), the detail alone.
    /// What the detail pane shows for span `ordinal` (a step or any other span): numbers, then
    /// its content (or its raw source). A model call shows its own output first, then the
    /// conversation it was sent: folded (each earlier message on one line, the last one whole)
    /// unless `conversationExpanded`, as Langfuse and Inspect collapse the history, so a long
    /// agent run's step does not bury what the step said under its system prompt.
    package static func detailLines(
        trace: TraceService.Loaded, ordinal: Int, detail: SpanDetail?, raw: Bool, theme: Theme, width: Int = 200,
        conversationExpanded: Bool = false
    ) -> [[Span]] {
        let span = trace.spans[ordinal]
        var lines: [[Span]] = []
        // Numbers: latency, tokens for the step and so far, model, status.
        var facts: [String] = []
        if trace.summary.timed { facts.append(TraceText.duration(span.endNs.map { $0 - span.startNs })) }
        if let model = span.model { facts.append(model) }
        if !facts.isEmpty { lines.append([Span(facts.joined(separator: " · "), theme.dim)]) }
        // Model calls and tool calls show their conversation; every other span (an agent, a
        // chain, a scorer) its subtree, score and attributes.
        guard let step = trace.steps.firstIndex(of: ordinal),
            span.kind == SpanKind.llm.rawValue || span.kind == SpanKind.tool.rawValue
        else {
            return lines
                + spanLines(trace: trace, ordinal: ordinal, detail: detail, raw: raw, theme: theme, width: width)
        }
        let sofar = trace.steps.prefix(step + 1).map { trace.spans[$0] }
        let cumulative = (
            sofar.compactMap(\.inputTokens).reduce(0, +), sofar.compactMap(\.outputTokens).reduce(0, +)
        )
        if span.inputTokens != nil || span.outputTokens != nil {
            var tokens = "tokens \(tokensText(span.inputTokens, span.outputTokens))"
            if let cached = span.cacheReadTokens { tokens += " (\(cached) cached)" }
            lines.append([Span(tokens + " · so far \(cumulative.0)/\(cumulative.1)", theme.text)])
        }
        if span.kind == SpanKind.llm.rawValue, span.cost != nil || span.inputTokens != nil || span.outputTokens != nil {
            let sofarCost = sofar.filter { $0.kind == SpanKind.llm.rawValue }.reduce(Double?(0)) { total, s in
                total.flatMap { t in s.cost.map { t + $0 } }
            }
            lines.append([
                Span(
                    "cost \(TraceText.cost(span.cost)) · so far \(TraceText.cost(sofarCost))",
                    span.cost == nil ? theme.dim : theme.text)
            ])
        }
        if span.status == "error" {
            lines.append(errorLine(span, theme: theme))
        }
        guard let detail else {
            lines.append([Span("loading…", theme.dim)])
            return lines
        }
        lines += unreadableLines(detail, theme: theme)
        let parameters = modelParameters(detail.payload.attributes)
        if !parameters.isEmpty { lines.append([Span(parameters, theme.dim)]) }
        lines += generatedTokensHint(detail.payload.attributes, theme: theme)
        if raw {
            lines += rawLines(detail, theme: theme)
            return lines
        }
        let payload = detail.payload
        if let tool = payload.tool {
            lines.append([Span("── arguments ──", theme.title)])
            if let problem = tool.argumentsError {
                lines.append([Span("⚠ " + UntrustedText.sanitized(problem), theme.status(.warn))])
                lines += UntrustedText.lines(tool.arguments).map { [Span($0, theme.text)] }
            } else {
                lines += UntrustedText.lines(detail.toolArguments ?? tool.arguments).map { [Span($0, theme.text)] }
            }
            if let error = tool.error {
                lines.append([Span("── error ──", theme.status(.error))])
                lines += UntrustedText.lines(error).map { [Span($0, theme.status(.error))] }
            }
            if let result = tool.result {
                lines.append([Span("── result ──", theme.title)])
                // A JSON result reads as well as the arguments do.
                lines += UntrustedText.lines(detail.toolResult ?? result).map { [Span($0, theme.text)] }
            }
        }
        if !payload.output.isEmpty {
            lines.append([Span("── output ──", theme.title)])
            for message in payload.output { lines += messageLines(message, theme: theme) }
        }
        if !payload.input.isEmpty {
            let count = payload.input.count
            let folds = count > 1 && !conversationExpanded
            lines.append(conversationHeading(count: count, folds: folds, width: width, theme: theme))
            for (index, message) in payload.input.enumerated() {
                // The last message is what the model answered: always whole.
                lines +=
                    folds && index < count - 1
                    ? [foldedMessageLine(message, theme: theme, width: width)] : messageLines(message, theme: theme)
            }
        }
        // The parameters line above already names these; the token view (T) shows the tokens.
        lines += attributeLines(
            payload.attributes,
            excluding: Set(parameterAttributes.map(\.key)).union([
                GeneratedTokens.attribute, GeneratedTokens.legacyAttribute,
            ]), theme: theme)
        return lines
    }

    private static func tokensText(_ input: Int?, _ output: Int?) -> String { tokens(input, output) }

    /// The heading over the conversation a call was sent, with the fold key: shortened to fit
    /// `width` (a narrow pane at 80 columns), so it never wraps.
    package static func conversationHeading(count: Int, folds: Bool, width: Int, theme: Theme) -> [Span] {
        let key = count > 1 ? (folds ? "  c: unfold" : "  c: fold") : ""
        let plural = "message\(count == 1 ? "" : "s")"
        let headings = [
            "── conversation as sent (\(count) \(plural)) ──", "── conversation sent (\(count)) ──",
            "── sent (\(count)) ──",
        ]
        let heading = headings.first { TextWidth.of($0) + key.count <= width } ?? headings[headings.count - 1]
        return [Span(heading, theme.title), Span(key, theme.dim)]
    }

    /// On a local model's step, the line that says its generated tokens are there and which key
    /// shows them.
    static func generatedTokensHint(_ attributes: JSONObject, theme: Theme) -> [[Span]] {
        guard let value = attributes[GeneratedTokens.attribute] ?? attributes[GeneratedTokens.legacyAttribute],
            let items = value.array, !items.isEmpty
        else { return [] }
        // Several choices are an array of arrays; one is an array of token objects.
        let count = items.first?.array.map { _ in items.compactMap(\.array).map(\.count).reduce(0, +) } ?? items.count
        return [
            [
                Span("T", theme.key),
                Span(": its \(plural(count, "generated token")) by probability", theme.dim),
            ]
        ]
    }

    /// The GenAI attributes the parameters line shows, with its label for each.
    static let parameterAttributes: [(key: String, label: String)] = [
        ("gen_ai.request.temperature", "temperature"), ("gen_ai.request.top_p", "top_p"),
        ("gen_ai.request.max_tokens", "max_tokens"), ("gen_ai.request.seed", "seed"),
        ("gen_ai.response.finish_reasons", "finish"), ("llm.invocation_parameters", "parameters"),
    ]

    /// `temperature 0.2 · max_tokens 512 · finish stop`, from the GenAI attributes a call carries.
    static func modelParameters(_ attributes: JSONObject) -> String {
        parameterAttributes.compactMap { key, label in
            attributes[key].map { label + " " + UntrustedText.sanitized(compact($0)) }
        }.joined(separator: " · ")
    }

    /// A value on one line: a list of strings joined by commas, anything else as ``JSONValue/text``.
    private static func compact(_ value: JSONValue) -> String {
        if let items = value.array, items.allSatisfy({ $0.string != nil }) {
            return items.compactMap(\.string).joined(separator: ",")
        }
        return value.text
    }

    /// The span's stored columns that did not read back, each where its content would be:
    /// `⚠ unreadable payload (trace 3, span 12, column payload_json): …`.
    private static func unreadableLines(_ detail: SpanDetail, theme: Theme) -> [[Span]] {
        detail.unreadable.map { [Span("⚠ " + UntrustedText.sanitized($0.description), theme.status(.warn))] }
    }

    /// A span's status message, for a span that failed.
    private static func errorLine(_ span: SpanRow, theme: Theme) -> [Span] {
        [Span("✗ " + UntrustedText.sanitized(span.statusMessage ?? "error"), theme.status(.error))]
    }

    /// The span as its file had it (`r`).
    private static func rawLines(_ detail: SpanDetail, theme: Theme) -> [[Span]] {
        [[Span("── raw source ──", theme.title)]]
            + UntrustedText.lines(detail.raw?.prettyJSON ?? "(no raw payload)").map { [Span($0, theme.text)] }
    }

    /// Attributes that hold a span's input and output in the conventions Loupe reads
    /// (Traceloop/OpenLLMetry, OpenInference), shown as its input and output.
    static let inputOutputAttributes: [(String, String)] = [
        ("traceloop.entity.input", "input"), ("input.value", "input"), ("traceloop.entity.output", "output"),
        ("output.value", "output"),
    ]

    /// An Inspect sample's limits: the ones it ran under and the one that stopped it.
    package static func limitLines(_ attributes: JSONObject, theme: Theme) -> [[Span]] {
        let configured = [
            ("message_limit", "messages"), ("token_limit", "tokens"), ("time_limit", "time (s)"),
            ("working_limit", "working time (s)"), ("cost_limit", "cost ($)"),
        ].compactMap { key, label in
            attributes["inspect.\(key)"]?.number.map { label + " " + Calculator.format($0) }
        }
        let type = attributes["inspect.limit.type"]?.string
        guard !configured.isEmpty || type != nil else { return [] }
        var lines: [[Span]] = [[Span("── limits ──", theme.title)]]
        if !configured.isEmpty {
            lines.append([Span("ran under  ", theme.key), Span(configured.joined(separator: " · "), theme.text)])
        }
        if let type {
            let value = attributes["inspect.limit.value"]?.number.map { " (\(Calculator.format($0)))" } ?? ""
            lines.append([Span("⚠ stopped by the \(UntrustedText.sanitized(type)) limit\(value)", theme.status(.warn))])
            if let message = attributes["inspect.limit.message"]?.string {
                lines += UntrustedText.lines(message).map { [Span("  " + $0, theme.dim)] }
            }
        } else {
            lines.append([Span("no limit was reached", theme.dim)])
        }
        return lines
    }

    /// A span that is not a step (an agent, chain, workflow, task, scorer): what its subtree
    /// used, its input and output, an Inspect score, the trace's scores at its root, and every
    /// attribute.
    static func spanLines(
        trace: TraceService.Loaded, ordinal: Int, detail: SpanDetail?, raw: Bool, theme: Theme, width: Int = 200
    ) -> [[Span]] {
        let span = trace.spans[ordinal]
        var lines: [[Span]] = []
        // The spans under it: the following ones deeper than it, up to the next at its depth.
        let depth = trace.depths[ordinal]
        let below = trace.spans[(ordinal + 1)...].prefix { trace.depths[$0.ordinal] > depth }
        // Its steps: a model call recorded again below it (an agent's generation span over the
        // server's) is one step, summed once, as the trace's totals sum it.
        let counted = Set(trace.steps)
        let steps = below.filter {
            counted.contains($0.ordinal) && ($0.kind == SpanKind.llm.rawValue || $0.kind == SpanKind.tool.rawValue)
        }
        if !steps.isEmpty {
            let input = steps.compactMap(\.inputTokens).reduce(0, +)
            let output = steps.compactMap(\.outputTokens).reduce(0, +)
            let cost = steps.filter { $0.kind == SpanKind.llm.rawValue }.reduce(Double?(0)) { total, s in
                total.flatMap { t in s.cost.map { t + $0 } }
            }
            lines.append([
                Span(
                    "under it: \(plural(steps.count, "step")) · tokens \(input)/\(output) · cost \(TraceText.cost(cost))",
                    theme.text)
            ])
        }
        if span.status == "error" {
            lines.append(errorLine(span, theme: theme))
        }
        if span.parentSpanID == nil, !trace.scores.isEmpty {
            lines.append([Span("── scores ──", theme.title)])
            for score in trace.scores {
                switch score.value {
                case .success(let value):
                    lines.append([
                        Span(UntrustedText.sanitized(score.scorer) + "  ", theme.key),
                        Span(UntrustedText.sanitized(compact(value)), theme.accent),
                    ])
                case .failure(let problem):
                    lines.append([
                        Span(UntrustedText.sanitized(score.scorer) + "  ", theme.key),
                        Span("⚠ " + UntrustedText.sanitized(problem.description), theme.status(.warn)),
                    ])
                }
                if let answer = score.answer {
                    lines.append([Span("  answer: " + UntrustedText.sanitized(answer), theme.text)])
                }
                if let explanation = score.explanation {
                    lines += UntrustedText.lines("explanation: " + explanation).map { [Span("  " + $0, theme.dim)] }
                }
            }
        }
        guard let detail else {
            lines.append([Span("loading…", theme.dim)])
            return lines
        }
        lines += unreadableLines(detail, theme: theme)
        if raw {
            lines += rawLines(detail, theme: theme)
            return lines
        }
        // An Inspect score event: the value, the answer it judged, the target and why.
        if let score = detail.raw?["score"], score.object != nil {
            lines.append([Span("── score ──", theme.title)])
            lines.append([Span("value  ", theme.key), Span(compact(score["value"] ?? .null), theme.accent)])
            for (key, label) in [("answer", "answer"), ("explanation", "explanation")] {
                if let text = score[key]?.string {
                    lines += UntrustedText.lines(label + ": " + text).map { [Span($0, theme.text)] }
                }
            }
            if let target = detail.raw?["target"] {
                lines += UntrustedText.lines("target: " + compact(target)).map { [Span($0, theme.text)] }
            }
        }
        let attributes = detail.payload.attributes
        var shown: Set<String> = []
        lines += forwardPassLines(attributes, theme: theme, width: width)
        shown.formUnion([
            ForwardPassRecord.operationsAttribute, ForwardPassRecord.kernelRunsAttribute,
            ForwardPassRecord.tokensAttribute,
        ])
        lines += limitLines(attributes, theme: theme)
        shown.formUnion(attributes.keys.filter { $0.hasPrefix("inspect.") && $0.contains("limit") })
        for (key, label) in inputOutputAttributes {
            guard let value = attributes[key] else { continue }
            shown.insert(key)
            lines.append([Span("── \(label) ──", theme.title)])
            lines += UntrustedText.lines(detail.laidOutAttributes[key] ?? value.string ?? value.prettyJSON).map {
                [Span($0, theme.text)]
            }
        }
        if !detail.payload.input.isEmpty {
            lines.append([Span("── input ──", theme.title)])
            for message in detail.payload.input { lines += messageLines(message, theme: theme) }
        }
        if !detail.payload.output.isEmpty {
            lines.append([Span("── output ──", theme.title)])
            for message in detail.payload.output { lines += messageLines(message, theme: theme) }
        }
        lines += attributeLines(attributes, excluding: shown, theme: theme)
        return lines
    }

    /// The span's attributes not shown above it, a key and its value a line, sorted by key (every
    /// span has its table, steps included, as Langfuse and Phoenix show one). A value past 240
    /// characters (a message list the conversation already shows) is cut, with its length: `r`
    /// shows the whole raw source.
    static func attributeLines(_ attributes: JSONObject, excluding shown: Set<String>, theme: Theme) -> [[Span]] {
        let rest = attributes.keys.filter { !shown.contains($0) }.sorted()
        guard !rest.isEmpty else { return [] }
        var lines: [[Span]] = [[Span("── attributes ──", theme.title)]]
        for key in rest {
            let value = UntrustedText.sanitized(compact(attributes[key]!))
            let cut = value.count > 240
            lines.append([
                Span(UntrustedText.sanitized(key) + "  ", theme.key),
                Span(cut ? String(value.prefix(240)) + "…" : value, theme.text),
                Span(cut ? "  (\(value.count) characters; r: raw)" : "", theme.dim),
            ])
        }
        return lines
    }

    /// A MiniLM forward pass or one of its layers: each operation's time, share, GFLOP/s and
    /// FLOP/byte (calls and FLOP/byte only where `width` has room), and on the pass itself, the
    /// key to its place on the roofline.
    static func forwardPassLines(_ attributes: JSONObject, theme: Theme, width: Int) -> [[Span]] {
        let operations = ForwardPassRecord.operations(attributes[ForwardPassRecord.operationsAttribute])
        guard !operations.isEmpty else { return [] }
        let total = operations.reduce(Int64(0)) { $0 + $1.nanoseconds }
        // Wide: operation, time, share, calls, GFLOP/s, FLOP/B (59 columns); narrow: the first
        // four. A column is kept for the scroll bar.
        let wide = width >= 60
        let nameWidth = wide ? 22 : max(8, width - 26)
        var lines: [[Span]] = [
            [Span("── operations (\(TraceText.duration(total)) in all) ──", theme.title)],
            [
                Span(
                    "operation".padding(toLength: nameWidth + 1, withPad: " ", startingAt: 0)
                        + (wide ? "    time  share calls GFLOP/s FLOP/B" : "    time  share GFLOP/s"), theme.dim)
            ],
        ]
        for entry in operations {
            let time = TraceText.duration(entry.nanoseconds)
            let share = 100 * Double(entry.nanoseconds) / Double(max(total, 1))
            let figures =
                wide
                ? String(
                    format: " %5.1f%% %5d %7.2f %6.2f", share, entry.calls, entry.gflopsPerSecond, entry.flopsPerByte)
                : String(format: " %5.1f%% %7.2f", share, entry.gflopsPerSecond)
            lines.append([
                Span(TextWidth.fit(UntrustedText.sanitized(entry.name), toColumns: nameWidth) + " ", theme.accent),
                Span(String(repeating: " ", count: max(0, 8 - time.count)) + time + figures, theme.text),
            ])
        }
        if let runs = attributes[ForwardPassRecord.kernelRunsAttribute]?.array, !runs.isEmpty {
            lines.append([
                Span("p", theme.key),
                Span(" shows them on the roofline: how far each is from the roof it is under", theme.dim),
            ])
        }
        return lines
    }

    /// `1 step`, `3 steps`.
    static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

    /// A message on one line: its role, the start of its text (or its tool calls) and how much
    /// is folded away.
    private static func foldedMessageLine(_ message: Message, theme: Theme, width: Int) -> [Span] {
        let text = UntrustedText.lines(message.text)
        let calls = message.toolCalls.map { UntrustedText.sanitized($0.name) + "(…)" }.joined(separator: ", ")
        let first =
            text.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? (calls.isEmpty ? "" : "→ " + calls)
        let role = "[\(UntrustedText.sanitized(message.role))] "
        let more = text.count > 1 ? " (\(text.count) lines)" : ""
        let room = max(8, width - 2 - TextWidth.of(role) - more.count - 1)
        return [
            Span("▸ ", theme.dim), Span(role, theme.key),
            Span(TextWidth.truncate(first.trimmingCharacters(in: .whitespaces), toColumns: room), theme.dim),
            Span(more, theme.dim),
        ]
    }

    private static func messageLines(_ message: Message, theme: Theme) -> [[Span]] {
        var lines: [[Span]] = [[Span("[\(UntrustedText.sanitized(message.role))]", theme.key)]]
        if let reasoning = message.reasoning, !reasoning.isEmpty {
            lines += UntrustedText.lines(reasoning).map { [Span("  ┊ " + $0, theme.dim)] }
        }
        if !message.text.isEmpty { lines += UntrustedText.lines(message.text).map { [Span("  " + $0, theme.text)] } }
        for call in message.toolCalls {
            lines.append([
                Span("  → ", theme.accent), Span(UntrustedText.sanitized(call.name), theme.accent),
                Span("(" + UntrustedText.sanitized(call.arguments) + ")", theme.dim),
                call.argumentsError != nil ? Span("  ⚠ invalid JSON", theme.status(.warn)) : Span("", theme.dim),
            ])
        }
        return lines
    }
}
