import LoupeBase

/// A horizontal progress bar with a label: `████████░░░░ 62%`.
package struct Gauge: Sendable {
    package var fraction: Double
    package var label: String

    package init(fraction: Double, label: String = "") {
        self.fraction = fraction
        self.label = label
    }

    package func render(into frame: inout Frame, area: Rect, theme: Theme) {
        guard area.width > 0, area.height > 0 else { return }
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        let text = label.isEmpty ? "\(Int((clamped * 100).rounded()))%" : label
        let barWidth = max(0, area.width - TextWidth.of(text) - 1)
        let eighths = Int((clamped * Double(barWidth) * 8).rounded())
        var bar = String(repeating: "█", count: eighths / 8)
        if eighths % 8 > 0 { bar += String(Sparkline.partialBlocks[eighths % 8]) }
        let filled = TextWidth.of(bar)
        frame.draw(bar, at: Point(x: area.x, y: area.y), style: theme.accent)
        frame.draw(
            String(repeating: "░", count: max(0, barWidth - filled)), at: Point(x: area.x + filled, y: area.y),
            style: theme.dim)
        frame.draw(text, at: Point(x: area.x + barWidth + 1, y: area.y), style: theme.text, clip: area)
    }
}
