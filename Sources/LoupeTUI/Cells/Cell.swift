/// One terminal cell: a grapheme cluster, its style and its width.
///
/// A wide glyph (CJK, most emoji) takes two cells: a lead cell with `width == 2` holding the
/// grapheme and a continuation cell with `width == 0` and an empty grapheme.
package struct Cell: Hashable, Sendable {
    package var grapheme: String
    package var style: Style
    package var width: UInt8

    package init(_ grapheme: String = " ", style: Style = .plain, width: UInt8 = 1) {
        self.grapheme = grapheme
        self.style = style
        self.width = width
    }

    /// A space in `style`.
    package static func blank(_ style: Style = .plain) -> Cell { Cell(" ", style: style, width: 1) }

    /// True for the second half of a wide glyph.
    package var isContinuation: Bool { width == 0 }
}
