import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension TracesPanel {
    /// The logit lens where the token view's cursor token was chosen (`l`): for the embeddings
    /// and each layer's residual stream at the position that predicted the token, the tokens it
    /// would predict through the final norm and the head, and how likely it found the one the
    /// model chose, as a bar: where in the depth the choice formed.
    package struct TokenLensView: Sendable {
        package let lens: TokenLens
        /// The layer row under the cursor.
        package private(set) var cursor: Int

        /// Opens on the first layer whose top token is the one chosen (the last layer when none is).
        package init(_ lens: TokenLens) {
            self.lens = lens
            cursor =
                lens.layers.firstIndex { layer in layer.chosen.map { $0.id == layer.top.first?.id } ?? false }
                ?? max(0, lens.layers.count - 1)
        }

        /// `j`/`k` a layer, the page keys ten, `g`/`G` the embeddings and the model's own prediction.
        mutating func perform(_ action: PanelAction) {
            cursor = action.moved(cursor, rows: lens.layers.count)
        }

        /// A lens row's name: `emb` for the token embeddings, `L n` for the stream leaving layer n.
        static func layerName(_ layer: Int) -> String { layer == 0 ? "emb" : "L\(layer - 1)" }

        // MARK: - Render

        func render(into frame: inout Frame, area: Rect, theme: Theme) {
            let context = lens.context
            let inner = Block(
                title: "logit lens · token #\(context.token) \(TracesPanel.quoted(context.chosen.text))",
                trailingTitle: "SmolLM2 · l/esc: close", focused: true
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 20, inner.height > 4 else { return }
            let final = lens.layers.last?.chosen.map { ", \(TracesPanel.probabilityText($0.probability)) here" } ?? ""
            let recorded = "p \(TracesPanel.probabilityText(context.chosen.probability))" + final
            let long =
                "each layer's prediction at position \(context.query) (\(lens.precisionName)); the step recorded "
                + recorded
            frame.draw(
                TextWidth.fit(
                    TextWidth.of(long) <= inner.width
                        ? long : "position \(context.query) (\(lens.precisionName)) · recorded " + recorded,
                    toColumns: inner.width), at: Point(x: inner.x, y: inner.y), style: theme.dim)
            let tokenWidth = min(16, max(8, inner.width / 6))
            let barWidth = min(24, max(8, inner.width / 5))
            let chosen = TextWidth.fit("p " + TracesPanel.quoted(context.chosen.text), toColumns: barWidth)
            frame.draw(
                [
                    Span("layer ", theme.dim), Span(TextWidth.fit("top", toColumns: tokenWidth + 7), theme.dim),
                    Span(chosen + " ", theme.dim), Span("then", theme.dim),
                ], at: Point(x: inner.x, y: inner.y + 1), clip: inner)
            let rows = Rect(x: inner.x, y: inner.y + 2, width: inner.width, height: inner.height - 2)
            let first = max(0, min(cursor - rows.height / 2, lens.layers.count - rows.height))
            for (offset, layer) in lens.layers.dropFirst(first).prefix(rows.height).enumerated() {
                let y = rows.y + offset
                let selected = first + offset == cursor
                var x = frame.draw(
                    Self.layerName(layer.layer).padding(toLength: 6, withPad: " ", startingAt: 0),
                    at: Point(x: rows.x, y: y), style: selected ? theme.selection : theme.dim, clip: rows)
                if let top = layer.top.first {
                    let isChosen = layer.chosen?.id == top.id
                    x += frame.draw(
                        TextWidth.fit(TracesPanel.quoted(top.text), toColumns: tokenWidth),
                        at: Point(x: rows.x + x, y: y), style: isChosen ? theme.accent : theme.text, clip: rows)
                    x += frame.draw(
                        String(format: " %.2f ", top.probability), at: Point(x: rows.x + x, y: y), style: theme.text,
                        clip: rows)
                }
                let p = layer.chosen?.probability ?? 0
                // Labels right-aligned to one width ("0.004", "2.2e-07"), so every bar is as long.
                let label = layer.chosen == nil ? "—" : TracesPanel.probabilityText(p)
                let aligned = String(repeating: " ", count: max(0, 7 - TextWidth.of(label))) + label
                Gauge(fraction: p, label: aligned).render(
                    into: &frame, area: Rect(x: rows.x + x, y: y, width: barWidth, height: 1), theme: theme)
                x += barWidth + 1
                let rest = layer.top.dropFirst().map {
                    UntrustedText.sanitized($0.text).debugDescription + String(format: " %.2f", $0.probability)
                }
                frame.draw(
                    TextWidth.fit(rest.joined(separator: "  "), toColumns: max(0, rows.width - x)),
                    at: Point(x: rows.x + x, y: y), style: theme.dim, clip: rows)
            }
            if lens.layers.count > rows.height {
                Scrollbar.render(
                    into: &frame, x: rows.maxX - 1, rows: rows, offset: first, count: lens.layers.count, theme: theme)
            }
        }
    }
}
