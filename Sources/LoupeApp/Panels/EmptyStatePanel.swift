import LoupeTUI

/// A panel whose engine has not landed yet: it says what the panel is for and which command
/// will fill it, instead of an empty box.
package struct EmptyStatePanel: Panel {
    package let id: PanelID
    package let title: String
    package let purpose: String
    package let commands: [String]

    package init(id: PanelID, title: String, purpose: String, commands: [String]) {
        self.id = id
        self.title = title
        self.purpose = purpose
        self.commands = commands
    }

    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let inner = Block(title: title, focused: context.focused).render(into: &frame, area: area, theme: context.theme)
        guard inner.width > 4, inner.height > 2 else { return }
        let width = min(inner.width - 4, 72)
        var lines: [[Span]] = []
        for line in TextView(lines: [[Span(purpose, context.theme.text)]]).displayRows(width: width) {
            lines.append(line)
        }
        lines.append([])
        lines.append([Span("Nothing here yet. This panel fills from:", context.theme.dim)])
        for command in commands {
            lines.append([Span("  $ ", context.theme.dim), Span(command, context.theme.accent)])
        }
        lines.append([])
        lines.append([Span("Press : to run a command, ctrl+p for the palette, ? for help.", context.theme.dim)])
        let top = inner.y + max(0, (inner.height - lines.count) / 2)
        let left = inner.x + max(0, (inner.width - width) / 2)
        for (index, line) in lines.enumerated() where top + index < inner.maxY {
            frame.draw(line, at: Point(x: left, y: top + index), clip: inner)
        }
    }

    /// The placeholder panels until their engines land, in tab order.
    package static let placeholders: [EmptyStatePanel] = [
        EmptyStatePanel(
            id: .evals, title: "Evals",
            purpose: "Eval runs with live progress, per-sample drill-down, confidence intervals and paired "
                + "run-to-run comparison.",
            commands: ["loupe eval run SUITE", "loupe eval compare RUN_A RUN_B"]
        )
    ]
}
