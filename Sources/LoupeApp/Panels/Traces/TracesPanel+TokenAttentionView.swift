import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension TracesPanel {
    /// SmolLM2's attention where the token view's cursor token was chosen (`a`): the step's real
    /// context (its recorded prompt and the tokens before), read at the position that predicted
    /// the token. The head grid shows every layer's 9 query heads, each as a strip over the context
    /// from its first token to the last (max-pooled: where in the context the head looks), as the
    /// Attention panel's grid shows MiniLM's heads; beside it the head under the cursor: which
    /// key/value head it reads, its entropy, and the earlier tokens it attends to most.
    package struct TokenAttentionView: Sendable {
        package let attention: TokenAttention
        /// The head under the cursor.
        package private(set) var layer: Int
        package private(set) var head: Int

        /// Opens on the head that reads one earlier token most sharply, the first token (where
        /// most heads park their attention) left out.
        package init(_ attention: TokenAttention) {
            self.attention = attention
            var best = (layer: 0, head: 0, p: Float(-1))
            for layer in 0..<attention.layers {
                for head in 0..<attention.heads {
                    let p = attention.row(layer: layer, head: head).dropFirst().max() ?? 0
                    if p > best.p { best = (layer, head, p) }
                }
            }
            layer = best.layer
            head = best.head
        }

        /// `j`/`k` a layer, `h`/`l` a head, the page keys ten layers, `g`/`G` the first and last layer.
        mutating func perform(_ action: PanelAction) {
            switch action {
            case .down: layer = min(attention.layers - 1, layer + 1)
            case .up: layer = max(0, layer - 1)
            case .right: head = min(attention.heads - 1, head + 1)
            case .left: head = max(0, head - 1)
            case .pageDown: layer = min(attention.layers - 1, layer + 10)
            case .pageUp: layer = max(0, layer - 10)
            case .top: layer = 0
            case .bottom: layer = attention.layers - 1
            case .open, .specific: break
            }
        }

        /// One head's row max-pooled into `bins` stretches of the context, first token to last.
        package func strip(layer: Int, head: Int, bins: Int) -> [Double] {
            let row = attention.row(layer: layer, head: head)
            let count = row.count
            let bins = max(1, min(bins, count))
            return (0..<bins).map { bin in
                let from = row.startIndex + bin * count / bins
                let to = max(from + 1, row.startIndex + (bin + 1) * count / bins)
                return Double(row[from..<to].max() ?? 0)
            }
        }

        /// A position's token as the view labels it: its position and quoted text.
        func label(_ position: Int, width: Int) -> String {
            TextWidth.fit("\(position) " + TracesPanel.quoted(attention.tokens[position]), toColumns: width)
        }

        // MARK: - Render

        func render(into frame: inout Frame, area: Rect, theme: Theme) {
            let context = attention.context
            let inner = Block(
                title: "attention · token #\(context.token) \(TracesPanel.quoted(context.chosen.text))",
                trailingTitle: "SmolLM2 · a/esc: close", focused: true
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 20, inner.height > 4 else { return }
            let position =
                "position \(context.query) of \(context.ids.count) "
                + "(p \(TracesPanel.probabilityText(context.chosen.probability)))"
            let perKV = attention.heads / max(1, Set(attention.keyValueHeads).count)
            let long =
                "chosen at " + position
                + " · \(attention.layers) layers × \(attention.heads) heads, \(perKV) per KV head · float path"
            let summary =
                TextWidth.of(long) <= inner.width
                ? long : position + " · \(attention.layers)×\(attention.heads) heads, \(perKV) per KV head · float"
            frame.draw(
                TextWidth.fit(summary, toColumns: inner.width), at: Point(x: inner.x, y: inner.y), style: theme.dim)
            let body = Rect(x: inner.x, y: inner.y + 1, width: inner.width, height: inner.height - 2)
            let cellWidth = max(2, min(6, (body.width * 9 / 20 - 4) / attention.heads - 1))
            let gridWidth = 4 + attention.heads * (cellWidth + 1)
            renderGrid(
                into: &frame, area: Rect(x: body.x, y: body.y, width: gridWidth, height: body.height),
                cellWidth: cellWidth, theme: theme)
            renderHead(
                into: &frame,
                area: Rect(
                    x: body.x + gridWidth + 1, y: body.y, width: body.width - gridWidth - 1, height: body.height),
                theme: theme)
            renderLegend(into: &frame, at: Point(x: inner.x, y: inner.maxY - 1), width: inner.width, theme: theme)
        }

        /// The layers × heads grid, scrolled to keep the cursor's layer in view.
        private func renderGrid(into frame: inout Frame, area: Rect, cellWidth: Int, theme: Theme) {
            for head in 0..<attention.heads {
                frame.draw(
                    TextWidth.fit("H\(head)", toColumns: cellWidth, alignment: .center),
                    at: Point(x: area.x + 4 + head * (cellWidth + 1), y: area.y),
                    style: head == self.head ? theme.selection : theme.dim, clip: area)
            }
            let rows = max(1, area.height - 1)
            let first = max(0, min(layer - rows / 2, attention.layers - rows))
            for layer in first..<min(attention.layers, first + rows) {
                let y = area.y + 1 + layer - first
                frame.draw(
                    "L\(layer)", at: Point(x: area.x, y: y), style: layer == self.layer ? theme.selection : theme.dim,
                    clip: area)
                for head in 0..<attention.heads {
                    let x = area.x + 4 + head * (cellWidth + 1)
                    for (column, p) in strip(layer: layer, head: head, bins: cellWidth).enumerated() {
                        let glyph = theme.isMonochrome ? TokenView.shadeGlyph(p) : "█"
                        frame.draw(
                            glyph == " " ? "·" : glyph, at: Point(x: x + column, y: y),
                            style: theme.isMonochrome ? theme.text : Style(foreground: theme.heatColor(p)), clip: area)
                    }
                    if layer == self.layer && head == self.head {
                        frame.draw("▕", at: Point(x: x - 1, y: y), style: theme.border(focused: true), clip: area)
                        frame.draw(
                            "▏", at: Point(x: x + cellWidth, y: y), style: theme.border(focused: true), clip: area)
                    }
                }
            }
            if attention.layers > rows {
                Scrollbar.render(
                    into: &frame, x: area.maxX - 1,
                    rows: Rect(x: area.x, y: area.y + 1, width: area.width, height: rows),
                    offset: first, count: attention.layers, theme: theme)
            }
        }

        /// The head under the cursor: its key/value head, entropy, first-token and previous-token
        /// shares, then the tokens it attends to most as bars.
        private func renderHead(into frame: inout Frame, area: Rect, theme: Theme) {
            guard area.width > 10, area.height > 2 else { return }
            let row = attention.row(layer: layer, head: head)
            let query = attention.context.query
            let previous = query > 0 ? row[row.startIndex + query - 1] : 0
            frame.draw(
                [
                    Span("L\(layer) H\(head)", theme.title),
                    Span(" · reads KV head \(attention.keyValueHeads[head])", theme.dim),
                ], at: Point(x: area.x, y: area.y), clip: area)
            // On one line where it fits, else on two (the line before the bars is free).
            let entropy = String(
                format: "entropy %.2f bits of %.1f", attention.entropy(layer: layer, head: head),
                log2(Double(max(2, attention.count))))
            let shares = String(format: "first token %.2f · previous %.2f", row[row.startIndex], previous)
            let stats =
                TextWidth.of(entropy + " · " + shares) <= area.width ? [entropy + " · " + shares] : [entropy, shares]
            for (offset, line) in stats.enumerated() {
                frame.draw(line, at: Point(x: area.x, y: area.y + 1 + offset), style: theme.dim, clip: area)
            }
            let chosen = TracesPanel.quoted(attention.context.chosen.text)
            frame.draw(
                TextWidth.fit("what position \(query) read to choose \(chosen)", toColumns: area.width),
                at: Point(x: area.x, y: area.y + 3), style: theme.title, clip: area)
            let labelWidth = min(22, max(10, area.width * 2 / 5))
            let rows = max(0, area.height - 4)
            for (offset, entry) in attention.top(layer: layer, head: head, limit: rows).enumerated() {
                let y = area.y + 4 + offset
                frame.draw(
                    label(entry.key, width: labelWidth), at: Point(x: area.x, y: y),
                    style: entry.key == query ? theme.accent : theme.text, clip: area)
                Gauge(fraction: Double(entry.probability), label: String(format: "%.3f", entry.probability)).render(
                    into: &frame,
                    area: Rect(x: area.x + labelWidth + 1, y: y, width: area.width - labelWidth - 1, height: 1),
                    theme: theme)
            }
        }

        private func renderLegend(into frame: inout Frame, at point: Point, width: Int, theme: Theme) {
            var x = frame.draw("strip: first token → chosen at, max p  0 ", at: point, style: theme.dim)
            for step in 0...8 {
                let p = Double(step) / 8
                let glyph = theme.isMonochrome ? TokenView.shadeGlyph(p) : "█"
                x += frame.draw(
                    glyph == " " ? "·" : glyph, at: Point(x: point.x + x, y: point.y),
                    style: theme.isMonochrome ? theme.text : Style(foreground: theme.heatColor(p)))
            }
            frame.draw(
                TextWidth.fit(" 1 · hjkl: head", toColumns: max(0, width - x)), at: Point(x: point.x + x, y: point.y),
                style: theme.dim)
        }
    }
}
