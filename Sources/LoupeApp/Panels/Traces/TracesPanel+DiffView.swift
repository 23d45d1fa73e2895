import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension TracesPanel {
    /// Two traces aligned step by step (`m` on one, `d` on another): a row per pair of steps,
    /// what changed, and the selected row's two sides in full.
    package struct DiffView: Sendable {
        package let diff: TraceDiff
        /// The selected row; it starts on the first divergence.
        package var list = ListState()

        init(_ diff: TraceDiff) {
            self.diff = diff
            list.selected = diff.firstDivergence ?? 0
        }

        /// The aligned rows move; enter, left and right do nothing here.
        mutating func perform(_ action: PanelAction, area: Rect) {
            list.navigate(action, count: diff.rows.count, page: max(1, area.height - 8))
        }

        /// The panel's own keys as the diff reads them: `e` is the next row where the runs part.
        mutating func perform(_ action: Action) {
            switch action {
            case .error:
                if let next = diff.rows.indices.first(where: { $0 > list.selected && diff.rows[$0].change != .same }) {
                    list.selected = next
                }
            case .mark, .diff, .fork, .forkInEditor, .tool, .raw, .play, .faster, .slower, .sort, .reverse, .reload,
                .nextSpan, .previousSpan, .sessions, .roofline, .conversation, .tokens, .nextUncertain,
                .previousUncertain, .attention, .lens, .features:
                // A step's keys and the list's: the diff has neither an open step nor the list.
                break
            }
        }

        func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
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
                        diff.firstDivergence.map { " ▶ first divergence: row \($0 + 1)" }
                            ?? " the runs did the same steps",
                        diff.firstDivergence == nil ? theme.status(.ok) : theme.status(.warn)),
                    diff.forkLink.map { Span("  ↳ " + $0, theme.accent) } ?? Span("", theme.dim),
                    Span("  − \(UntrustedText.sanitized(diff.left.name))", theme.dim),
                    Span("  + \(UntrustedText.sanitized(diff.right.name))", theme.dim),
                ], at: Point(x: inner.x, y: inner.y), clip: inner)
            let detailHeight = min(8, inner.height / 3)
            let tableArea = Rect(
                x: inner.x, y: inner.y + 1, width: inner.width, height: inner.height - 1 - detailHeight)
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
            var state = list
            TableView(columns: columns, rows: cells, focused: context.focused).render(
                into: &frame, area: tableArea, state: &state, theme: theme)
            guard list.selected < diff.rows.count else { return }
            let row = diff.rows[list.selected]
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
    }
}
