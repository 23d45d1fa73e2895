import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import LoupeTUI

extension TracesPanel {
    /// Fork at a step (`f`): a line over the open trace where the step's new tool result or user
    /// message is edited; enter runs `trace fork` with it, esc closes it.
    package struct ForkEditor: Sendable {
        package var input: LineEditor

        init(_ text: String) { input = LineEditor(text) }

        /// What a key did to the line.
        enum Outcome: Equatable {
            case editing
            case cancelled
            case submitted(String)
        }

        mutating func handle(_ key: Key) -> Outcome {
            switch key {
            case .escape: return .cancelled
            case .enter: return .submitted(input.text)
            default:
                input.handle(key)
                return .editing
            }
        }

        /// The line at the bottom of `area` (the open trace's), saying what is edited and who
        /// continues: the `f` key forks with the offline policy, not `model`, the one the trace
        /// ran (a hosted one needs `:trace fork … --provider openai --model M`).
        func render(into frame: inout Frame, area: Rect, spanKind: String, model: String?, theme: Theme) {
            let line = Rect(x: area.x, y: area.y + area.height - 1, width: area.width, height: 1)
            frame.fill(line, style: theme.text)
            input.render(
                into: &frame, area: line,
                prompt: [
                    Span(
                        spanKind == SpanKind.tool.rawValue ? " fork · new result" : " fork · new message", theme.accent),
                    Span(
                        " · continued by the offline policy"
                            + (model.map { ", not \(UntrustedText.sanitized($0))" } ?? ""), theme.dim),
                    Span(" › ", theme.accent),
                ],
                style: theme.text)
        }
    }
}
