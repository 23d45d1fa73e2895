import LoupeBase

/// An in-memory grid of cells: what one screen shows.
///
/// Rendering writes into a `Frame`; a backend then paints what changed (``diff(from:)``) on a
/// terminal. Tests compare its text and styles with golden files, so a frame is the seam between
/// the TUI and its tests.
/// Every text drawn into a frame goes through ``UntrustedText/sanitized(_:)``: no control
/// character or escape sequence can reach a cell.
package struct Frame: Hashable, Sendable {
    package let size: Size
    package private(set) var cells: [Cell]

    /// A frame of blank cells in `style`.
    package init(size: Size, style: Style = .plain) {
        self.size = Size(width: max(0, size.width), height: max(0, size.height))
        cells = Array(repeating: .blank(style), count: self.size.width * self.size.height)
    }

    package var width: Int { size.width }
    package var height: Int { size.height }
    package var area: Rect { Rect(size: size) }

    /// The cell at column `x`, row `y`; both must be inside the frame.
    package subscript(x: Int, y: Int) -> Cell {
        get {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "cell (\(x), \(y)) outside \(size)")
            return cells[y * width + x]
        }
        set {
            precondition(x >= 0 && x < width && y >= 0 && y < height, "cell (\(x), \(y)) outside \(size)")
            cells[y * width + x] = newValue
        }
    }

    /// Blanks every cell of `rect` (clipped to the frame) in `style`. A style without a
    /// background keeps each cell's: only a theme's base may leave the terminal's default (a
    /// light theme on a dark terminal would otherwise show black patches).
    package mutating func fill(_ rect: Rect, style: Style) {
        let clipped = rect.intersection(area)
        guard !clipped.isEmpty else { return }
        let blank = Cell.blank(style)
        for y in clipped.y..<clipped.maxY {
            let start = y * width
            for x in clipped.x..<clipped.maxX {
                cells[start + x] =
                    style.background == nil ? .blank(style.keepingBackground(of: cells[start + x].style)) : blank
            }
            repairWideGlyphs(row: y, around: clipped.x, clipped.maxX)
        }
    }

    /// Patches the style of every cell in `rect` with `style` (colours it sets, attributes added).
    package mutating func restyle(_ rect: Rect, with style: Style) {
        let clipped = rect.intersection(area)
        guard !clipped.isEmpty else { return }
        for y in clipped.y..<clipped.maxY {
            for x in clipped.x..<clipped.maxX {
                cells[y * width + x].style = cells[y * width + x].style.patched(with: style)
            }
        }
    }

    /// Draws `text` on one row from `point`, clipped to `clip` and the frame, and returns the
    /// number of columns it took.
    ///
    /// The text is sanitised first. Text cut by the right edge ends in `…` in the last column,
    /// so a reader knows there is more (a header read "✗ 1 er" at 80 columns); a fill cut short
    /// (a rule of `─`, trailing spaces) is not text and is cut plainly. A wide glyph that would
    /// straddle the right edge gives way to the ellipsis. A style without a background keeps the
    /// background already in each cell, so text drawn on a filled pane or a selected row stays on it.
    @discardableResult
    package mutating func draw(_ text: some StringProtocol, at point: Point, style: Style, clip: Rect? = nil) -> Int {
        let bounds = clip.map { $0.intersection(area) } ?? area
        guard point.y >= bounds.y, point.y < bounds.maxY else { return 0 }
        let safe = UntrustedText.sanitized(text)
        var x = point.x
        let limit = bounds.maxX
        let rowStart = point.y * width
        let firstX = x
        var previous: Character?
        for (offset, character) in zip(safe.indices, safe) {
            defer { previous = character }
            let style =
                x >= bounds.x && x < limit ? style.keepingBackground(of: cells[rowStart + x].style) : style
            let glyphWidth = TextWidth.of(character)
            if glyphWidth == 0 {
                // A combining mark that starts the text has no base to join; draw it on a space.
                if x == firstX, x >= bounds.x, x < limit {
                    cells[rowStart + x] = Cell(" " + String(character), style: style, width: 1)
                    x += 1
                }
                continue
            }
            if x + glyphWidth > limit {
                if x < limit, x >= bounds.x { cells[rowStart + x] = .blank(style) }
                x = min(x + 1, limit)
                if Self.isText(safe[offset...], after: previous) {
                    markCut(row: point.y, at: limit - 1, from: max(firstX, bounds.x), style: style)
                }
                break
            }
            if x >= bounds.x {
                cells[rowStart + x] = Cell(String(character), style: style, width: UInt8(glyphWidth))
                if glyphWidth == 2 { cells[rowStart + x + 1] = Cell("", style: style, width: 0) }
            }
            x += glyphWidth
        }
        let end = min(x, limit)
        if end > max(point.x, bounds.x) { repairWideGlyphs(row: point.y, around: max(point.x, bounds.x), end) }
        return max(0, end - point.x)
    }

    /// Draws spans one after the other from `point`; returns the columns taken. Spans cut by the
    /// right edge end in `…`, even where the cut falls between two spans.
    @discardableResult
    package mutating func draw(_ spans: [Span], at point: Point, clip: Rect? = nil) -> Int {
        let bounds = clip.map { $0.intersection(area) } ?? area
        let room = max(0, bounds.maxX - point.x)
        var x = point.x
        for span in Self.isCut(spans, toColumns: room) ? spans.truncated(toColumns: room) : spans {
            x += draw(span.text, at: Point(x: x, y: point.y), style: span.style, clip: clip)
        }
        return x - point.x
    }

    /// Puts one grapheme (assumed safe and one column wide) in a cell; used by canvases. A
    /// style without a background keeps the cell's, as ``draw(_:at:style:clip:)`` does.
    package mutating func put(_ grapheme: String, x: Int, y: Int, style: Style) {
        guard x >= 0, x < width, y >= 0, y < height else { return }
        cells[y * width + x] = Cell(grapheme, style: style.keepingBackground(of: cells[y * width + x].style), width: 1)
        repairWideGlyphs(row: y, around: x, x + 1)
    }

    /// True when `spans` do not fit in `columns` and what does not fit is text, not a fill.
    private static func isCut(_ spans: [Span], toColumns columns: Int) -> Bool {
        guard spans.width > columns else { return false }
        let plain = UntrustedText.sanitized(spans.plainText)
        var used = 0
        var previous: Character?
        var index = plain.startIndex
        while index < plain.endIndex {
            let glyphWidth = TextWidth.of(plain[index])
            if used + glyphWidth > columns { break }
            used += glyphWidth
            if glyphWidth > 0 { previous = plain[index] }
            index = plain.index(after: index)
        }
        return isText(plain[index...], after: previous)
    }

    /// True when `rest`, the part of a text the right edge cut off, holds more than a fill: not
    /// only spaces, nor only more of the glyph drawn last (a rule `────`, a dotted leader `····`).
    private static func isText(_ rest: Substring, after previous: Character?) -> Bool {
        rest.contains { !$0.isWhitespace && $0 != previous && TextWidth.of($0) > 0 }
    }

    /// Puts `…` in column `x` of `row` (when `x` is at or right of `start`, where the text began
    /// to show), replacing whatever glyph, or half of a wide one, the cut text left there.
    private mutating func markCut(row y: Int, at x: Int, from start: Int, style: Style) {
        guard x >= start, x >= 0, x < width else { return }
        let rowStart = y * width
        let style = style.keepingBackground(of: cells[rowStart + x].style)
        cells[rowStart + x] = Cell("…", style: style, width: 1)
        repairWideGlyphs(row: y, around: x, x + 1)
    }

    /// After cells `start..<end` of a row were overwritten, blanks the halves of wide glyphs that
    /// the write cut in two, so no orphan lead or continuation cell is left on either side.
    private mutating func repairWideGlyphs(row y: Int, around start: Int, _ end: Int) {
        let rowStart = y * width
        if start > 0, start < width, cells[rowStart + start].width != 0,
            cells[rowStart + start - 1].width == 2
        {
            cells[rowStart + start - 1] = .blank(cells[rowStart + start - 1].style)
        }
        if start < width, cells[rowStart + start].width == 0 {
            cells[rowStart + start] = .blank(cells[rowStart + start].style)
        }
        if end < width, cells[rowStart + end].width == 0 {
            cells[rowStart + end] = .blank(cells[rowStart + end].style)
        }
    }
}
