import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension TracesPanel {
    /// The traces list: every trace with its totals, sorted by a column (`s`, `S`) and filtered
    /// by what `/` kept, with the sessions they group into read along with them.
    package struct ListView: Sendable {
        /// The traces as last read; nil until the first read.
        package private(set) var traces: [TraceSummary]?
        package var list = ListState()
        package private(set) var sort = TableSort(column: 0, ascending: true)
        /// The filter, kept with enter after `/` (esc clears it).
        package private(set) var filter: TraceFilter?
        /// How many traces there are while only the first of them are shown (the whole list is
        /// being read); nil once it is.
        package private(set) var partOf: Int?
        /// Why the last read of the list failed; nil once a read succeeds.
        package private(set) var failure: String?
        /// The traces grouped by session, read with the list.
        package private(set) var sessions: [TraceSession] = []
        /// Traces still arriving (received, spans waiting for their parent, the last within ten
        /// minutes), as of the last read of the list.
        package private(set) var live: Set<Int64> = []
        /// How long after its last span a received trace still counts as live (the tests widen
        /// it, so that a loaded machine's pauses cannot decide what they check).
        package var liveWindow: TimeInterval = TraceSummary.liveWindow

        /// The traces in the chosen order.
        package var rows: [TraceSummary] {
            let all = (traces ?? []).filter { filter?.matches($0) ?? true }
            func key(_ t: TraceSummary) -> Double {
                switch sort.column {
                // Untimed traces (message lists) start when they were imported.
                case 0: return t.timed ? Double(t.startedNs) : t.importedAt.timeIntervalSince1970 * 1e9
                case 1: return t.timed ? Double(t.durationNs) : -1
                case 2: return Double(t.stepCount)
                case 3: return Double((t.inputTokens ?? 0) + (t.outputTokens ?? 0))
                case 4: return t.cost ?? -1
                default: return Double(t.errorCount)
                }
            }
            return all.enumerated().sorted { a, b in
                let (x, y) = (key(a.element), key(b.element))
                if x == y { return a.offset < b.offset }
                return sort.ascending ? x < y : x > y
            }.map(\.element)
        }

        /// The selected trace's id, if any.
        var selectedID: Int64? {
            let rows = self.rows
            return list.selected < rows.count ? rows[list.selected].id : nil
        }

        /// Shows `loaded` as the list; the selection stays on its trace. `total`, when more
        /// traces than these exist, says the rest are being read.
        mutating func accept(_ loaded: [TraceSummary], partOf total: Int? = nil) {
            let selected = selectedID
            traces = loaded
            partOf = total
            failure = nil
            let now = Date()
            live = Set(loaded.filter { $0.isLive(now: now, window: liveWindow) }.map(\.id))
            sessions = TraceService.sessions(of: loaded)
            if let selected, let index = rows.firstIndex(where: { $0.id == selected }) {
                list.selected = index
            } else {
                list.selected = min(list.selected, max(0, rows.count - 1))
            }
        }

        /// The list could not be read: `message` in its place until it can (a read after a
        /// PostgreSQL server came back clears it, as any list read that succeeds does).
        mutating func failed(_ message: String) {
            traces = traces ?? []
            failure = message
        }

        /// Keeps `filter` over the list, from the top; nil clears it.
        mutating func keep(_ filter: TraceFilter?) {
            self.filter = filter
            if filter != nil { list = ListState() }
        }

        /// Moving keys, and enter, whose trace comes back to be opened.
        mutating func perform(_ action: PanelAction, area: Rect) -> Int64? {
            switch action {
            case .down, .up, .pageDown, .pageUp, .top, .bottom:
                list.navigate(action, count: rows.count, page: max(1, area.height - 4))
            case .open: return selectedID
            case .left, .right, .specific: break
            }
            return nil
        }

        /// `s`: sort by the next column; start ascends (oldest first), the measures descend
        /// (largest first). `S`: reverse.
        mutating func sortByNextColumn() {
            let next = (sort.column + 1) % TracesPanel.sortColumns.count
            sort = TableSort(column: next, ascending: next == 0)
        }

        mutating func reverseSort() { sort.ascending.toggle() }

        /// `n`/`N`: the next trace the filter language `query` matches.
        mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
            let wanted = TraceFilter(query)
            let rows = self.rows
            guard
                let index = nextIndex(
                    count: rows.count, from: list.selected, forward: forward, includeCurrent: includeCurrent,
                    where: { wanted.matches(rows[$0]) })
            else { return false }
            list.selected = index
            return true
        }

        /// The list in its block: the sort and the filter in the titles, `marked` (`m`) with ◆,
        /// Why the last read of the list failed (``failed(_:)``), or `error`, in place of the list.
        func render(into frame: inout Frame, area: Rect, context: PanelRenderContext, marked: Int64?, error: String?) {
            let theme = context.theme
            var sorted = "sort: \(TracesPanel.sortColumns[sort.column]) \(sort.ascending ? "↑" : "↓")"
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
            if let error = failure ?? error {
                frame.draw(
                    UntrustedText.sanitized(error), at: Point(x: inner.x + 1, y: inner.y + 1),
                    style: theme.status(.error),
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
                    [
                        Span(
                            "to http://127.0.0.1:4318 (OTEL_EXPORTER_OTLP_ENDPOINT, protocol http/protobuf).", theme.dim
                        )
                    ],
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
                    TraceText.duration(t.timed ? t.durationNs : nil), TracesPanel.tokens(t.inputTokens, t.outputTokens),
                    TraceText.cost(t.cost),
                    (live.contains(t.id) ? "● " : "")
                        // A fork names its parent and the span it forked at.
                        + (t.parentTraceID.map { "↳\($0):\(t.forkOrdinal ?? 0) " } ?? "")
                        + UntrustedText.sanitized(t.name),
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
                columns: kept.map { columns[$0] }, rows: table.map { row in kept.map { row[$0] } },
                focused: context.focused
            )
            .render(into: &frame, area: inner, state: &state, theme: theme)
        }
    }
}
