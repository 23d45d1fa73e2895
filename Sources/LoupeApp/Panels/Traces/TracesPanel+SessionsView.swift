import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension TracesPanel {
    /// The Sessions view (`v`): the traces grouped by session, conversation or thread, then one
    /// session's turns in order; enter on a turn opens its trace. The sessions themselves are
    /// read with the list; this holds where the view stands in them, kept while the list shows
    /// (`v` again comes back to the same session).
    package struct SessionsView: Sendable {
        package var sessionList = ListState()
        /// The session whose turns are listed, when one is open.
        package private(set) var openSession: String?
        package var turnList = ListState()

        /// Keys among `sessions`: moving, and enter to open a session or (in one) a turn's trace,
        /// whose id comes back.
        mutating func perform(_ action: PanelAction, sessions: [TraceSession], area: Rect) -> Int64? {
            let page = max(1, area.height - 4)
            if let id = openSession {
                let turns = sessions.first { $0.id == id }?.turns ?? []
                switch action {
                case .down, .up, .pageDown, .pageUp, .top, .bottom:
                    turnList.navigate(action, count: turns.count, page: page)
                case .open:
                    guard turnList.selected < turns.count else { return nil }
                    return turns[turnList.selected].id
                case .left, .right, .specific: break
                }
                return nil
            }
            switch action {
            case .down, .up, .pageDown, .pageUp, .top, .bottom:
                sessionList.navigate(action, count: sessions.count, page: page)
            case .open:
                guard sessionList.selected < sessions.count else { return nil }
                openSession = sessions[sessionList.selected].id
                turnList = ListState()
            case .left, .right, .specific: break
            }
            return nil
        }

        /// Back from a session's turns to the sessions; false when none is open.
        mutating func closeSession() -> Bool {
            guard openSession != nil else { return false }
            openSession = nil
            return true
        }

        /// The sessions were read again: the selection stays within them.
        mutating func clamp(to sessions: [TraceSession]) {
            sessionList.selected = min(sessionList.selected, max(0, sessions.count - 1))
        }

        /// The Sessions view: every session with its totals, or one session's turns in order.
        func render(
            into frame: inout Frame, area: Rect, context: PanelRenderContext, sessions: [TraceSession], live: Set<Int64>
        ) {
            let theme = context.theme
            if let id = openSession, let session = sessions.first(where: { $0.id == id }) {
                let inner = Block(
                    title: "Sessions · \(UntrustedText.sanitized(id))"
                        + (session.turns.contains { live.contains($0.id) } ? " · ● live" : ""),
                    trailingTitle: "\(session.turns.count) turns · \(TraceText.duration(session.durationNs)) · "
                        + "\(TracesPanel.tokens(session.inputTokens, session.outputTokens)) tokens · \(TraceText.cost(session.cost))",
                    focused: context.focused
                ).render(into: &frame, area: area, theme: theme)
                guard inner.width > 20, inner.height > 2 else { return }
                let table = session.turns.enumerated().map { n, t -> [String] in
                    [
                        "\(n + 1)", "\(t.id)", TraceText.duration(t.startedNs - session.startedNs),
                        TraceText.duration(t.timed ? t.durationNs : nil), "\(t.stepCount)",
                        t.errorCount > 0 ? "✗ \(t.errorCount)" : "", TracesPanel.tokens(t.inputTokens, t.outputTokens),
                        TraceText.cost(t.cost), (live.contains(t.id) ? "● " : "") + UntrustedText.sanitized(t.name),
                    ]
                }
                let columns = [
                    TableColumn("turn", width: .length(4), alignment: .trailing),
                    TableColumn("trace", width: .length(5), alignment: .trailing),
                    TableColumn("at", width: .length(8), alignment: .trailing),
                    TableColumn("duration", width: .length(9), alignment: .trailing),
                    TableColumn("steps", width: .length(5), alignment: .trailing),
                    TableColumn("errors", width: .length(6)),
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
                    TracesPanel.tokens(s.inputTokens, s.outputTokens), TraceText.cost(s.cost),
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
    }
}
