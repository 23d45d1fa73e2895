/// A complete colour theme: a colour for every ``ThemeRole`` plus the heatmap ramp.
///
/// Panels never name colours; they ask the theme for semantic styles (``selection``,
/// ``border(focused:)`` …). A monochrome theme (from `mono.toml` or `NO_COLOR`) answers with
/// attributes only: reverse for selections, bold for focus, shade glyphs for heatmaps.
package struct Theme: Hashable, Sendable {
    package var name: String
    package var colors: [ThemeRole: ThemeColor] { didSet { markFloor = floorOfMarks() } }
    package var heatmapRamp: [RGB] { didSet { markFloor = floorOfMarks() } }
    package var isMonochrome: Bool { didSet { markFloor = floorOfMarks() } }
    /// Where ``heatMarkColor(_:)`` starts on the ramp: the first of 20 steps with a contrast of 3
    /// against the background (black for the terminal's dark default, white for a light one).
    /// Kept beside the colours it follows from (set again whenever one of them changes), because
    /// finding it takes up to 21 contrast computations and a heatmap asks for it once per cell.
    package private(set) var markFloor: Double = 0

    package init(name: String, colors: [ThemeRole: ThemeColor], heatmapRamp: [RGB], isMonochrome: Bool = false) {
        self.name = name
        self.colors = colors
        self.heatmapRamp = heatmapRamp
        self.isMonochrome = isMonochrome
        markFloor = floorOfMarks()
    }

    /// The colour of `role`, or nil for the terminal default (always nil when monochrome).
    package func color(_ role: ThemeRole) -> RGB? {
        isMonochrome ? nil : colors[role]?.rgb
    }

    /// This theme with every colour dropped and attributes carrying the meaning.
    package func monochrome(named newName: String? = nil) -> Theme {
        var copy = self
        copy.name = newName ?? name
        copy.isMonochrome = true
        return copy
    }

    /// True when the theme's background is light (its channels average above half): colours
    /// drawn on it are darkened rather than brightened. The terminal's default counts as dark.
    package var hasLightBackground: Bool {
        guard let background = color(.background) else { return false }
        return Int(background.red) + Int(background.green) + Int(background.blue) > 3 * 128
    }

    /// The colour of a mark (a line, a glyph) drawn at `fraction` (0...1) on the background
    /// itself. A heatmap ramp starts near its theme's background (viridis' #440154 on a dark
    /// terminal), so its weakest colours vanish as strokes: marks take the ramp from the first
    /// point whose colour has a WCAG contrast of at least 3 (graphics) against the background.
    package func heatMarkColor(_ fraction: Double) -> RGB {
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        return heatColor(markFloor + (1 - markFloor) * clamped)
    }

    /// ``markFloor`` worked out from the colours.
    private func floorOfMarks() -> Double {
        for step in 0...20 where heatColor(Double(step) / 20).contrast(with: backgroundOrDefault) >= 3 {
            return Double(step) / 20
        }
        return 0
    }

    /// The background colours are drawn on: the theme's, else the terminal's default taken as
    /// black (or white for a light theme).
    package var backgroundOrDefault: RGB {
        color(.background) ?? (hasLightBackground ? RGB(255, 255, 255) : RGB(0, 0, 0))
    }

    /// The colour at `fraction` (0...1) along the heatmap ramp.
    package func heatColor(_ fraction: Double) -> RGB {
        guard heatmapRamp.count > 1 else { return heatmapRamp.first ?? RGB(255, 255, 255) }
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        let position = clamped * Double(heatmapRamp.count - 1)
        let index = min(Int(position), heatmapRamp.count - 2)
        return RGB.mix(heatmapRamp[index], heatmapRamp[index + 1], position - Double(index))
    }
}
