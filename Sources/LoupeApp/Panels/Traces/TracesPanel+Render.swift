import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension TracesPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        if let diff {
            renderDiff(diff, into: &frame, area: area, context: context)
            return
        }
        if let trace {
            let inner = Block(
                title: "Traces · \(UntrustedText.sanitized(trace.summary.name))",
                trailingTitle: (live.contains(trace.summary.id)
                    ? "● live" + (step >= trace.steps.count - 1 ? " · following" : "") + " · " : "")
                    + "step \(trace.steps.isEmpty ? 0 : step + 1)/\(trace.steps.count)"
                    + (raw ? " · raw" : ""),
                focused: context.focused
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 20, inner.height > 4 else { return }
            renderTrace(trace, into: &frame, area: inner, theme: theme, zoomed: context.zoomed)
            if forking {
                let kind = currentOrdinal.map { trace.spans[$0].kind } ?? ""
                // Who continues: the `f` key forks with the offline policy; say so, beside the model
                // the trace ran (a hosted one needs `:trace fork … --provider openai --model M`).
                let model = trace.spans.lazy.compactMap(\.model).first
                let line = Rect(x: inner.x, y: inner.y + inner.height - 1, width: inner.width, height: 1)
                frame.fill(line, style: theme.text)
                forkInput.render(
                    into: &frame, area: line,
                    prompt: [
                        Span(
                            kind == SpanKind.tool.rawValue ? " fork · new result" : " fork · new message", theme.accent),
                        Span(
                            " · continued by the offline policy"
                                + (model.map { ", not \(UntrustedText.sanitized($0))" } ?? ""), theme.dim),
                        Span(" › ", theme.accent),
                    ],
                    style: theme.text)
            }
            return
        }
        if showingSessions {
            renderSessions(into: &frame, area: area, context: context)
            return
        }
        var sorted = "sort: \(Self.sortColumns[sort.column]) \(sort.ascending ? "↑" : "↓")"
        if let partOf, let shown = traces?.count {
            sorted = "first \(grouped(shown)) of \(grouped(partOf)), reading the rest · " + sorted
        }
        let inner = Block(
            title: filter.map {
                "Traces · filter “\(UntrustedText.sanitized($0.text))” · \(rows.count) of \(traces?.count ?? 0)"
            }
                ?? "Traces",
            trailingTitle: filter == nil ? sorted : "esc clears · " + sorted, focused: context.focused
        ).render(into: &frame, area: area, theme: theme)
        guard inner.width > 20, inner.height > 2 else { return }
        if let error {
            frame.draw(
                UntrustedText.sanitized(error), at: Point(x: inner.x + 1, y: inner.y + 1), style: theme.status(.error),
                clip: inner)
            return
        }
        guard let traces else {
            frame.draw("Loading traces…", at: Point(x: inner.x + 1, y: inner.y + 1), style: theme.dim, clip: inner)
            return
        }
        guard !traces.isEmpty else {
            let lines: [[Span]] = [
                [
                    Span(
                        "Replay agent runs step by step: span tree, timeline, tokens, tool calls and errors.",
                        theme.text)
                ],
                [],
                [Span("No traces in this workspace yet. Import some:", theme.dim)],
                [Span("  $ ", theme.dim), Span("loupe trace import FILE…", theme.accent)],
                [Span("OTLP JSON, Inspect logs, SWE-agent, OpenAI messages: see sample-data/traces.", theme.dim)],
                [
                    Span("Or live over OTLP: ", theme.dim), Span(":listen", theme.accent),
                    Span(" here, or ", theme.dim), Span("$ loupe serve", theme.accent),
                    Span(" on a shell, exporting", theme.dim),
                ],
                [Span("to http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_ENDPOINT, protocol http/protobuf).", theme.dim)],
            ]
            let text = Rect(x: inner.x + 1, y: inner.y + 1, width: inner.width - 2, height: inner.height - 1)
            TextView(lines: lines).render(into: &frame, area: text, offset: 0, theme: theme)
            return
        }
        // The start the list is sorted by (a trace without timestamps: when it was imported, marked ~).
        let when = DateFormatter()
        when.dateFormat = "MM-dd HH:mm:ss"
        let table = rows.map { t -> [String] in
            [
                (t.id == marked ? "◆" : "") + "\(t.id)", t.format,
                t.timed
                    ? when.string(from: Date(timeIntervalSince1970: Double(t.startedNs) / 1e9))
                    : "~" + when.string(from: t.importedAt),
                "\(t.stepCount)", "\(t.spanCount)", t.errorCount > 0 ? "✗ \(t.errorCount)" : "",
                TraceText.duration(t.timed ? t.durationNs : nil), Self.tokens(t.inputTokens, t.outputTokens),
                TraceText.cost(t.cost), (live.contains(t.id) ? "● " : "") + UntrustedText.sanitized(t.name),
            ]
        }
        let columns = [
            // Wide enough for the largest id (and the mark), so ids past 9,999 are not cut.
            TableColumn(
                "id", width: .length(max(4, String(traces.map(\.id).max() ?? 0).count + 1)), alignment: .trailing),
            TableColumn("format", width: .length(9)), TableColumn("start", width: .length(15)),
            TableColumn("steps", width: .length(5), alignment: .trailing),
            TableColumn("spans", width: .length(5), alignment: .trailing), TableColumn("errors", width: .length(6)),
            TableColumn("duration", width: .length(9), alignment: .trailing),
            TableColumn("tokens in/out", width: .length(13), alignment: .trailing),
            TableColumn("cost", width: .length(9), alignment: .trailing), TableColumn("name", width: .fill(1)),
        ]
        // Narrow terminals keep the name: spans and tokens give way first.
        let kept = inner.width >= 110 ? Array(columns.indices) : columns.indices.filter { ![4, 7].contains($0) }
        var state = list
        TableView(
            columns: kept.map { columns[$0] }, rows: table.map { row in kept.map { row[$0] } }, focused: context.focused
        )
        .render(into: &frame, area: inner, state: &state, theme: theme)
    }

    /// The Sessions view: every session with its totals, or one session's turns in order.
    private func renderSessions(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        if let id = openSession, let session = sessions.first(where: { $0.id == id }) {
            let inner = Block(
                title: "Sessions · \(UntrustedText.sanitized(id))"
                    + (session.turns.contains { live.contains($0.id) } ? " · ● live" : ""),
                trailingTitle: "\(session.turns.count) turns · \(TraceText.duration(session.durationNs)) · "
                    + "\(Self.tokens(session.inputTokens, session.outputTokens)) tokens · \(TraceText.cost(session.cost))",
                focused: context.focused
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 20, inner.height > 2 else { return }
            let table = session.turns.enumerated().map { n, t -> [String] in
                [
                    "\(n + 1)", "\(t.id)", TraceText.duration(t.startedNs - session.startedNs),
                    TraceText.duration(t.timed ? t.durationNs : nil), "\(t.stepCount)",
                    t.errorCount > 0 ? "✗ \(t.errorCount)" : "", Self.tokens(t.inputTokens, t.outputTokens),
                    TraceText.cost(t.cost), (live.contains(t.id) ? "● " : "") + UntrustedText.sanitized(t.name),
                ]
            }
            let columns = [
                TableColumn("turn", width: .length(4), alignment: .trailing),
                TableColumn("trace", width: .length(5), alignment: .trailing),
                TableColumn("at", width: .length(8), alignment: .trailing),
                TableColumn("duration", width: .length(9), alignment: .trailing),
                TableColumn("steps", width: .length(5), alignment: .trailing), TableColumn("errors", width: .length(6)),
                TableColumn("tokens in/out", width: .length(13), alignment: .trailing),
                TableColumn("cost", width: .length(9), alignment: .trailing),
                TableColumn("turn's trace", width: .fill(1)),
            ]
            var state = turnList
            TableView(columns: columns, rows: table, focused: context.focused).render(
                into: &frame, area: inner, state: &state, theme: theme)
            return
        }
        let inner = Block(
            title: "Sessions", trailingTitle: "\(sessions.count) sessions · v traces", focused: context.focused
        ).render(into: &frame, area: area, theme: theme)
        guard inner.width > 20, inner.height > 2 else { return }
        guard !sessions.isEmpty else {
            let lines: [[Span]] = [
                [Span("No sessions: no trace carries a session or conversation id.", theme.text)],
                [],
                [
                    Span(
                        "Turns group by session.id, gen_ai.conversation.id, a LangGraph thread_id, or an eval sample's epochs.",
                        theme.dim)
                ],
            ]
            let text = Rect(x: inner.x + 1, y: inner.y + 1, width: inner.width - 2, height: inner.height - 1)
            TextView(lines: lines).render(into: &frame, area: text, offset: 0, theme: theme)
            return
        }
        let table = sessions.map { s -> [String] in
            [
                (s.turns.contains { live.contains($0.id) } ? "● " : "") + UntrustedText.sanitized(s.id),
                "\(s.turns.count)", "\(s.steps)",
                s.errorCount > 0 ? "✗ \(s.errorCount)" : "", TraceText.duration(s.durationNs),
                Self.tokens(s.inputTokens, s.outputTokens), TraceText.cost(s.cost),
                UntrustedText.sanitized(s.models.joined(separator: ", ")),
            ]
        }
        let columns = [
            TableColumn("session", width: .fill(3)), TableColumn("turns", width: .length(5), alignment: .trailing),
            TableColumn("steps", width: .length(5), alignment: .trailing), TableColumn("errors", width: .length(6)),
            TableColumn("duration", width: .length(9), alignment: .trailing),
            TableColumn("tokens in/out", width: .length(13), alignment: .trailing),
            TableColumn("cost", width: .length(9), alignment: .trailing), TableColumn("models", width: .fill(1)),
        ]
        var state = sessionList
        TableView(columns: columns, rows: table, focused: context.focused).render(
            into: &frame, area: inner, state: &state, theme: theme)
    }

    private func renderDiff(_ diff: TraceDiff, into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let counts = diff.counts
        let inner = Block(
            title: "Diff · trace \(diff.left.id) ↔ trace \(diff.right.id)",
            trailingTitle: "\(counts[.same, default: 0]) same · \(counts[.changed, default: 0]) changed · "
                + "\(counts[.onlyLeft, default: 0]) −  \(counts[.onlyRight, default: 0]) +",
            focused: context.focused
        ).render(into: &frame, area: area, theme: theme)
        guard inner.width > 30, inner.height > 6 else { return }
        let timed = diff.left.timed && diff.right.timed
        frame.draw(
            [
                Span(
                    diff.firstDivergence.map { " ▶ first divergence: row \($0 + 1)" } ?? " the runs did the same steps",
                    diff.firstDivergence == nil ? theme.status(.ok) : theme.status(.warn)),
                Span("  − \(UntrustedText.sanitized(diff.left.name))", theme.dim),
                Span("  + \(UntrustedText.sanitized(diff.right.name))", theme.dim),
            ], at: Point(x: inner.x, y: inner.y), clip: inner)
        let detailHeight = min(8, inner.height / 3)
        let tableArea = Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: inner.height - 1 - detailHeight)
        let symbols: [TraceDiff.Change: String] = [.same: "=", .changed: "≠", .onlyLeft: "−", .onlyRight: "+"]
        func cell(_ span: SpanRow?) -> String {
            guard let span else { return "·" }
            let name = span.kind == SpanKind.tool.rawValue ? (span.toolName ?? span.name) : span.name
            return UntrustedText.sanitized(
                "#\(span.ordinal) \(span.kind) \(name)" + (span.status == "error" ? " ✗" : ""))
        }
        let table = diff.rows.enumerated().map { index, row -> [String] in
            var latency = ""
            if timed, let delta = row.latencyDeltaNs, delta != 0 {
                latency = (delta > 0 ? "+" : "−") + TraceText.duration(abs(delta))
            }
            return [
                (index == diff.firstDivergence ? "▶" : "") + "\(index + 1)", symbols[row.change]!, cell(row.left),
                cell(row.right), UntrustedText.sanitized(row.verdictChange ?? ""),
                row.tokenDelta.map { $0 == 0 ? "" : ($0 > 0 ? "+" : "") + String($0) } ?? "", latency,
            ]
        }
        // An evaluation's verdict on each side (`C → I`) gets its own column when the runs were
        // scored, so a changed score is read in the table, not only in the row's detail.
        let verdictWidth = min(16, diff.rows.compactMap(\.verdictChange).map(TextWidth.of).max() ?? 0)
        var columns = [
            TableColumn("row", width: .length(5), alignment: .trailing), TableColumn("", width: .length(1)),
            TableColumn("left · trace \(diff.left.id)", width: .fill(1)),
            TableColumn("right · trace \(diff.right.id)", width: .fill(1)),
            TableColumn("score", width: .length(max(5, verdictWidth))),
            TableColumn("Δ tokens", width: .length(8), alignment: .trailing),
            TableColumn("Δ latency", width: .length(9), alignment: .trailing),
        ]
        var cells = table
        if verdictWidth == 0 {
            columns.remove(at: 4)
            cells = table.map { row in row.enumerated().filter { $0.offset != 4 }.map(\.element) }
        }
        var state = diffList
        TableView(columns: columns, rows: cells, focused: context.focused).render(
            into: &frame, area: tableArea, state: &state, theme: theme)
        guard diffList.selected < diff.rows.count else { return }
        let row = diff.rows[diffList.selected]
        let detail = Rect(x: inner.x, y: tableArea.y + tableArea.height, width: inner.width, height: detailHeight)
        let halves = detail.split(.horizontal, [.percentage(50), .fill(1)])
        let style = row.change == .same ? theme.dim : theme.text
        for (half, text, title) in [(halves[0], row.leftText, "left"), (halves[1], row.rightText, "right")] {
            let box = Block(title: title, focused: false).render(into: &frame, area: half, theme: theme)
            let lines = UntrustedText.sanitized(text).split(separator: " ⏎ ").map { [Span(String($0), style)] }
            TextView(lines: lines.isEmpty ? [[Span("—", theme.dim)]] : lines).render(
                into: &frame, area: box, offset: 0, theme: theme)
        }
    }

    package static func tokens(_ input: Int?, _ output: Int?) -> String {
        input == nil && output == nil ? "—" : "\(input.map(String.init) ?? "—")/\(output.map(String.init) ?? "—")"
    }

    /// The header, then the span tree beside the step's detail; zoomed (`z`), the detail alone.
    private func renderTrace(
        _ trace: TraceService.Loaded, into frame: inout Frame, area: Rect, theme: Theme, zoomed: Bool
    ) {
        let s = trace.summary
        let usage = (s.inputTokens, s.outputTokens)
        frame.draw(
            [
                Span(" \(s.format)", theme.accent),
                Span(
                    " · \(Self.plural(s.stepCount, "step")) · \(Self.plural(s.spanCount, "span")) · "
                        + (s.timed ? TraceText.duration(s.durationNs) : "untimed") + " · tokens "
                        + Self.tokens(usage.0, usage.1) + " · cost " + TraceText.cost(s.cost), theme.dim),
                s.errorCount > 0
                    ? Span(" · ✗ \(Self.plural(s.errorCount, "error"))", theme.status(.error)) : Span("", theme.dim),
                playing
                    ? Span(" · ▶ \(Calculator.format(Self.playSpeeds[speed])) s/step", theme.accent)
                    : Span("", theme.dim),
                deepMatches.map {
                    Span(
                        " · “\(UntrustedText.sanitized($0.query))” in \(Self.plural($0.ordinals.count, "span"))",
                        theme.accent)
                } ?? Span("", theme.dim),
                // The first error's message, wherever its span is (e goes there), as room allows.
                trace.spans.first { $0.status == "error" }?.statusMessage.map {
                    Span(" · first: " + UntrustedText.sanitized($0) + " (e)", theme.status(.error))
                } ?? Span("", theme.dim),
            ], at: Point(x: area.x, y: area.y), clip: area)
        let body = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
        if zoomed {
            renderDetail(trace, into: &frame, area: body, theme: theme)
            return
        }
        let parts = body.split(.horizontal, [.percentage(48), .fill(1)])
        renderTree(trace, into: &frame, area: parts[0], theme: theme)
        renderDetail(trace, into: &frame, area: parts[1], theme: theme)
    }

    /// The span tree, each row with its bar on the trace's time axis; the step under the cursor
    /// selected, errors marked.
    private func renderTree(_ trace: TraceService.Loaded, into frame: inout Frame, area: Rect, theme: Theme) {
        let inner = Block(title: "Spans", trailingTitle: trace.summary.timed ? "timeline" : "order", focused: false)
            .render(into: &frame, area: area, theme: theme)
        guard inner.width > 8, inner.height > 0 else { return }
        let current = currentOrdinal ?? -1
        let barWidth = max(8, inner.width * 2 / 5)
        let labelWidth = inner.width - barWidth - 1
        // Keep the current span in view.
        // The last row is the time axis when the spans leave room for it.
        let axis = trace.summary.timed && trace.spans.count < inner.height
        let top = max(0, min(current - inner.height / 2, trace.spans.count - inner.height))
        let start = trace.summary.startedNs
        let total = max(1, trace.summary.endedNs - start)
        let glyph: [String: String] = [
            "agent": "◆", "llm": "●", "tool": "⚒", "retrieval": "⌕", "embedding": "∿", "eval": "✓",
        ]
        for (row, span) in trace.spans.dropFirst(top).prefix(inner.height).enumerated() {
            let y = inner.y + row
            let depth = trace.depths[span.ordinal]
            let failed = span.status == "error"
            let selected = span.ordinal == current
            let label =
                String(repeating: "  ", count: min(depth, 8)) + (glyph[span.kind] ?? "·") + " "
                + UntrustedText.sanitized(span.name) + (failed ? " ✗" : "")
            let style: Style =
                selected
                ? theme.selection : failed ? theme.status(.error) : span.kind == "agent" ? theme.accent : theme.text
            frame.draw(
                TextWidth.fit(label, toColumns: labelWidth), at: Point(x: inner.x, y: y), style: style, clip: inner)
            // The bar: where the span sits in the trace's time (untimed: its place in order).
            let begin = span.startNs - start
            let end = (span.endNs ?? span.startNs) - start
            let from = Int(Double(begin) / Double(total) * Double(barWidth - 1))
            let to = max(from, Int(Double(end) / Double(total) * Double(barWidth - 1)))
            let bar = String(repeating: " ", count: from) + String(repeating: "▬", count: to - from + 1)
            frame.draw(
                bar, at: Point(x: inner.x + labelWidth + 1, y: y),
                style: failed ? theme.status(.error) : selected ? theme.key : theme.dim, clip: inner)
        }
        if axis {
            let end = TraceText.duration(total)
            let line = "0" + String(repeating: "·", count: max(1, barWidth - 1 - end.count)) + end
            frame.draw(line, at: Point(x: inner.x + labelWidth + 1, y: inner.maxY - 1), style: theme.dim, clip: inner)
        }
    }

    private func renderDetail(_ trace: TraceService.Loaded, into frame: inout Frame, area: Rect, theme: Theme) {
        guard let ordinal = currentOrdinal else {
            _ = Block(title: "Step", focused: false).render(into: &frame, area: area, theme: theme)
            return
        }
        let span = trace.spans[ordinal]
        let inner = Block(title: "\(span.kind) · \(UntrustedText.sanitized(span.name))", focused: false).render(
            into: &frame, area: area, theme: theme)
        guard inner.width > 8, inner.height > 0 else { return }
        var lines = Self.detailLines(
            trace: trace, ordinal: ordinal, detail: detail, raw: raw, theme: theme, width: inner.width,
            conversationExpanded: conversationExpanded)
        // A step found by `/` shows where the text is.
        if let matches = deepMatches, matches.ordinals.contains(ordinal) {
            lines = lines.map { $0.highlighting(matches.query, as: theme.match) }
        }
        _ = TextView(lines: lines).render(into: &frame, area: inner, offset: detailOffset, theme: theme)
    }

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
        let parameters = modelParameters(detail.payload.attributes)
        if !parameters.isEmpty { lines.append([Span(parameters, theme.dim)]) }
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
                let pretty = (try? JSONValue.parse(tool.arguments))?.prettyJSON ?? tool.arguments
                lines += UntrustedText.lines(pretty).map { [Span($0, theme.text)] }
            }
            if let error = tool.error {
                lines.append([Span("── error ──", theme.status(.error))])
                lines += UntrustedText.lines(error).map { [Span($0, theme.status(.error))] }
            }
            if let result = tool.result {
                lines.append([Span("── result ──", theme.title)])
                // A JSON result reads as well as the arguments do.
                lines += UntrustedText.lines(prettyIfJSON(result)).map { [Span($0, theme.text)] }
            }
        }
        if !payload.output.isEmpty {
            lines.append([Span("── output ──", theme.title)])
            for message in payload.output { lines += messageLines(message, theme: theme) }
        }
        if !payload.input.isEmpty {
            let count = payload.input.count
            let folds = count > 1 && !conversationExpanded
            lines.append([
                Span("── conversation as sent (\(count) message\(count == 1 ? "" : "s")) ──", theme.title),
                Span(count > 1 ? (folds ? "  c: unfold" : "  c: fold") : "", theme.dim),
            ])
            for (index, message) in payload.input.enumerated() {
                // The last message is what the model answered: always whole.
                lines +=
                    folds && index < count - 1
                    ? [foldedMessageLine(message, theme: theme, width: width)] : messageLines(message, theme: theme)
            }
        }
        // The parameters line above already names these.
        lines += attributeLines(
            payload.attributes, excluding: Set(parameterAttributes.map(\.key)), theme: theme)
        return lines
    }

    private static func tokensText(_ input: Int?, _ output: Int?) -> String { tokens(input, output) }

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

    /// `text` laid out over several lines when it is a JSON array or object; as it is otherwise.
    private static func prettyIfJSON(_ text: String) -> String {
        (try? JSONValue.parse(text)).flatMap { $0.isContainer ? $0.prettyJSON : nil } ?? text
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
        let steps = below.filter { $0.kind == SpanKind.llm.rawValue || $0.kind == SpanKind.tool.rawValue }
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
                let value = (try? JSONValue.parse(score.valueJSON)).map(compact) ?? score.valueJSON
                lines.append([Span(UntrustedText.sanitized(score.scorer) + "  ", theme.key), Span(value, theme.accent)])
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
            lines += UntrustedText.lines(value.string.map(prettyIfJSON) ?? value.prettyJSON).map {
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
    private static func plural(_ n: Int, _ word: String) -> String { "\(n) \(word)\(n == 1 ? "" : "s")" }

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
