import LoupeBase

/// The row of panel tabs: `1 Traces  2 Retrieval …`, the active one highlighted.
package struct TabBar: Sendable {
    package var titles: [String]
    /// What the tabs not selected show when their titles do not fit (`Retr` for `Retrieval`).
    package var shortTitles: [String]
    package var selected: Int

    /// `shortTitles` default to the titles; given, there must be one per title.
    package init(titles: [String], shortTitles: [String]? = nil, selected: Int) {
        precondition(shortTitles.map { $0.count == titles.count } ?? true, "one short title per tab")
        self.titles = titles
        self.shortTitles = shortTitles ?? titles
        self.selected = selected
    }

    /// How tight the tabs are set: spaced, touching, tight (unpadded titles one space apart, the
    /// selected one padded over its neighbouring spaces), tight with the short titles for the tabs
    /// not selected, or only numbers for those.
    private enum Fit {
        case spaced, touching, tight, abbreviated, numbers

        /// Tight and abbreviated tabs are set alike: one space apart, unpadded.
        var isTight: Bool { self == .tight || self == .abbreviated }
    }

    /// The rectangle each tab occupies in `area`, for drawing and for mouse hit-testing. Tabs are
    /// set closer (then show their short titles, then only their numbers, the selected one keeping
    /// its title) rather than lost off the edge; tabs that still do not fit get an empty rectangle.
    package func tabRects(in area: Rect) -> [Rect] { layout(in: area).rects }

    private func layout(in area: Rect) -> (rects: [Rect], fit: Fit) {
        let fit =
            [Fit.spaced, .touching, .tight, .abbreviated].first { fit in
                let widths = titles.indices.map { TextWidth.of(label($0, fit)) }
                // Spaced and tight tabs have a space between them; a tight selected tab, the last
                // one, needs one more after it for its padding.
                let gaps = fit == .touching ? 0 : widths.count - 1
                return area.x + 1 + widths.reduce(0, +) + gaps + (fit.isTight ? 1 : 0) <= area.maxX
            } ?? .numbers
        var x = area.x + 1
        var rects: [Rect] = []
        for index in titles.indices {
            let width = TextWidth.of(label(index, fit))
            if x + width > area.maxX {
                rects.append(Rect(x: x, y: area.y, width: 0, height: 0))
                continue
            }
            rects.append(Rect(x: x, y: area.y, width: width, height: 1))
            x += width + (fit == .spaced || fit.isTight ? 1 : 0)
        }
        return (rects, fit)
    }

    package func render(into frame: inout Frame, area: Rect, theme: Theme) {
        let (rects, fit) = layout(in: area)
        for (index, rect) in rects.enumerated() where !rect.isEmpty {
            let active = index == selected
            if fit.isTight, active {
                // Padded over the spaces beside it, as the selected tab is in the other fits.
                frame.draw(
                    " " + label(index, fit) + " ", at: Point(x: rect.x - 1, y: rect.y), style: theme.tab(active: true),
                    clip: area)
                continue
            }
            frame.draw(label(index, fit), at: Point(x: rect.x, y: rect.y), style: theme.tab(active: active))
            if !active, index < 9 {
                frame.draw(
                    String(index + 1), at: Point(x: rect.x + (fit.isTight ? 0 : 1), y: rect.y), style: theme.key)
            }
        }
    }

    private func label(_ index: Int, _ fit: Fit) -> String {
        let title = fit == .abbreviated && index != selected ? shortTitles[index] : titles[index]
        guard index < 9 else { return fit.isTight ? title : " \(title) " }
        switch fit {
        case .tight, .abbreviated: return "\(index + 1) \(title)"
        case .numbers where index != selected: return " \(index + 1) "
        default: return " \(index + 1) \(title) "
        }
    }
}
