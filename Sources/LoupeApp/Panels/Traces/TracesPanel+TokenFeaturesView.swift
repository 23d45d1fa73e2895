import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension TracesPanel {
    /// The SAE features active where the token view's cursor token was chosen (`x`), as `loupe sae
    /// at` prints them: each feature's activation there, as a bar against its largest activation
    /// over the SAE's training tokens (how strongly it fired here, for it), and its label. A
    /// feature's card is `loupe sae feature SAE N`, or the SAE panel.
    package struct TokenFeaturesView: Sendable {
        package let features: TokenFeatures
        /// The feature row under the cursor.
        package private(set) var cursor = 0

        package init(_ features: TokenFeatures) { self.features = features }

        /// `j`/`k` a feature, the page keys ten, `g`/`G` the strongest and the weakest.
        mutating func perform(_ action: PanelAction) {
            cursor = action.moved(cursor, rows: features.features.count)
        }

        // MARK: - Render

        func render(into frame: inout Frame, area: Rect, theme: Theme) {
            let inner = Block(
                title: "SAE features · token #\(features.token) \(TracesPanel.quoted(features.chosen))",
                trailingTitle: "SmolLM2 · x/esc: close", focused: true
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 20, inner.height > 3 else { return }
            let active = TracesPanel.plural(features.features.count, "feature") + " active"
            let long =
                "SAE \(features.sae) on the stream after layer \(features.layer) at position \(features.position): "
                + active
            let short = "SAE \(features.sae) · layer \(features.layer) · position \(features.position) · " + active
            frame.draw(
                TextWidth.fit(TextWidth.of(long) <= inner.width ? long : short, toColumns: inner.width),
                at: Point(x: inner.x, y: inner.y), style: theme.dim)
            guard !features.features.isEmpty else {
                frame.draw(
                    "no feature of this SAE fires here", at: Point(x: inner.x, y: inner.y + 2), style: theme.dim,
                    clip: inner)
                return
            }
            let barWidth = min(30, max(12, inner.width / 3))
            if let unreadable = features.maximaUnreadable {
                // No bars without the maxima: the row that would title them says why.
                frame.draw(
                    TextWidth.fit("⚠ " + UntrustedText.sanitized(unreadable), toColumns: inner.width),
                    at: Point(x: inner.x, y: inner.y + 1), style: theme.status(.warn))
            } else {
                frame.draw(
                    [
                        Span("feature  ", theme.dim),
                        Span(TextWidth.fit("activation / its max", toColumns: barWidth) + "  ", theme.dim),
                        Span("label", theme.dim),
                    ], at: Point(x: inner.x, y: inner.y + 1), clip: inner)
            }
            let rows = Rect(x: inner.x, y: inner.y + 2, width: inner.width, height: inner.height - 2)
            let all = features.features
            // "1.74/3.93", or "0.50" where no peak was recorded: right-aligned to one width, so
            // the bars line up; without a peak there is no bar.
            let labels = all.map { feature in
                String(format: "%.2f", feature.activation)
                    + (feature.maxActivation.map { String(format: "/%.2f", $0) } ?? "")
            }
            let labelWidth = labels.map(TextWidth.of).max() ?? 0
            let first = max(0, min(cursor - rows.height / 2, all.count - rows.height))
            for (offset, feature) in all.dropFirst(first).prefix(rows.height).enumerated() {
                let y = rows.y + offset
                let number = String(feature.feature)
                frame.draw(
                    String(repeating: " ", count: max(0, 7 - number.count)) + number + "  ",
                    at: Point(x: rows.x, y: y), style: first + offset == cursor ? theme.selection : theme.text,
                    clip: rows)
                let label = labels[first + offset]
                let aligned = String(repeating: " ", count: max(0, labelWidth - TextWidth.of(label))) + label
                if let peak = feature.maxActivation {
                    Gauge(fraction: peak > 0 ? Double(feature.activation / peak) : 0, label: aligned).render(
                        into: &frame, area: Rect(x: rows.x + 9, y: y, width: barWidth, height: 1), theme: theme)
                } else {
                    frame.draw(
                        TextWidth.fit(aligned, toColumns: barWidth, alignment: .trailing),
                        at: Point(x: rows.x + 9, y: y), style: theme.text, clip: rows)
                }
                if let label = feature.label {
                    frame.draw(
                        TextWidth.fit(UntrustedText.sanitized(label), toColumns: max(0, rows.width - 11 - barWidth)),
                        at: Point(x: rows.x + 11 + barWidth, y: y), style: theme.text, clip: rows)
                }
            }
            if all.count > rows.height {
                Scrollbar.render(
                    into: &frame, x: rows.maxX - 1, rows: rows, offset: first, count: all.count, theme: theme)
            }
        }
    }
}
