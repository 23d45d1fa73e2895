import LoupeBase
import LoupeTUI

/// A frame's styles as text for golden files: a legend of its distinct styles, then one key per cell.
///
/// The text is the legend, one `KEY: fg=#rrggbb bg=default bold` line per style in the order the
/// styles first appear (row by row, left to right), a blank line, then one line per row holding
/// one key per cell, every row as wide as the frame:
///
///     .: fg=default bg=default
///     a: fg=#1e1e2e bg=#89b4fa bold
///
///     aaaa....
///     ........
///
/// `.` always stands for ``Style/plain``; other styles take `a`–`z`, `A`–`Z`, `0`–`9`, then
/// one-column letters from Latin-1 to Armenian, about a thousand keys. Colours are written as
/// `#rrggbb` or `default` (nil), attributes in a fixed order. Both columns of a wide glyph carry
/// its lead cell's key, since a terminal paints the whole glyph in that style.
///
/// This lives in test support rather than in LoupeTUI because only golden files read it; the app
/// never shows a style map.
package struct StyleMap: Hashable, Sendable {
    /// One legend line: the key that stands for a style in the rows, and that style written out.
    package struct Entry: Hashable, Sendable {
        /// The single character used for the style in ``StyleMap/rows``.
        package var key: Character
        /// The style as `fg=… bg=…` followed by its attributes, e.g. `fg=#ffffff bg=default bold`.
        package var style: String

        package init(key: Character, style: String) {
            self.key = key
            self.style = style
        }
    }

    /// The distinct styles in order of first appearance.
    package var legend: [Entry]
    /// One string per frame row, one legend key per cell.
    package var rows: [String]

    package init(legend: [Entry], rows: [String]) {
        self.legend = legend
        self.rows = rows
    }

    /// The style map of `frame`.
    ///
    /// Needs a key for every distinct style: a frame with more than about a thousand is a
    /// precondition failure. O(width × height).
    package init(_ frame: Frame) {
        var keys: [Style: Character] = [.plain: "."]
        var nextKey = 0
        var legend: [Entry] = []
        var listed: Set<Character> = []
        var rows: [String] = []
        rows.reserveCapacity(frame.height)
        for y in 0..<frame.height {
            var row = ""
            for x in 0..<frame.width {
                let cell = frame[x, y]
                let style = cell.isContinuation && x > 0 ? frame[x - 1, y].style : cell.style
                let key: Character
                if let known = keys[style] {
                    key = known
                } else {
                    precondition(
                        nextKey < Self.keys.count,
                        "a style map names at most \(Self.keys.count) styles besides plain; this frame has more")
                    key = Self.keys[nextKey]
                    nextKey += 1
                    keys[style] = key
                }
                if listed.insert(key).inserted {
                    legend.append(Entry(key: key, style: Self.describe(style)))
                }
                row.append(key)
            }
            rows.append(row)
        }
        self.init(legend: legend, rows: rows)
    }

    /// Reads a style map back from its ``text``; nil when the text is not in that format.
    ///
    /// A trailing newline, as golden files end, is ignored.
    package init?(parsing text: String) {
        let body = text.hasSuffix("\n") ? text.dropLast() : text[...]
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard let blank = lines.firstIndex(where: \.isEmpty) else { return nil }
        var legend: [Entry] = []
        for line in lines[..<blank] {
            guard let key = line.first, line.dropFirst().hasPrefix(": ") else { return nil }
            legend.append(Entry(key: key, style: String(line.dropFirst(3))))
        }
        self.init(legend: legend, rows: lines[(blank + 1)...].map(String.init))
    }

    /// The map as golden files hold it, without a trailing newline.
    package var text: String {
        legend.map { "\($0.key): \($0.style)" }.joined(separator: "\n") + "\n\n" + rows.joined(separator: "\n")
    }

    /// The written-out style of `key`, or nil when the legend has no such key.
    package func style(of key: Character) -> String? {
        legend.first { $0.key == key }?.style
    }

    /// The columns of row `y` whose style (not merely key) differs from `other`'s.
    ///
    /// Keys are compared through each map's own legend, so the same style under another key is
    /// no difference; a column one map lacks is.
    package func columnsStyledDifferently(inRow y: Int, from other: StyleMap) -> [Int] {
        let mine = y < rows.count ? Array(rows[y]) : []
        let theirs = y < other.rows.count ? Array(other.rows[y]) : []
        return (0..<max(mine.count, theirs.count)).filter { x in
            let left = x < mine.count ? style(of: mine[x]) : nil
            let right = x < theirs.count ? other.style(of: theirs[x]) : nil
            return left == nil || left != right
        }
    }

    /// The rows where some column's style differs from `other`'s; see ``columnsStyledDifferently(inRow:from:)``.
    package func rowsStyledDifferently(from other: StyleMap) -> [Int] {
        (0..<max(rows.count, other.rows.count)).filter { !columnsStyledDifferently(inRow: $0, from: other).isEmpty }
    }

    /// `fg=… bg=…` then the attributes in a fixed order; unknown attribute bits as a number so
    /// a new attribute cannot go unnoticed.
    private static func describe(_ style: Style) -> String {
        var words = ["fg=" + (style.foreground?.hex ?? "default"), "bg=" + (style.background?.hex ?? "default")]
        var remaining = style.attributes
        for (attribute, name) in attributeNames where remaining.contains(attribute) {
            words.append(name)
            remaining.remove(attribute)
        }
        if !remaining.isEmpty { words.append("attributes=\(remaining.rawValue)") }
        return words.joined(separator: " ")
    }

    private static let attributeNames: [(TextAttributes, String)] = [
        (.bold, "bold"), (.dim, "dim"), (.italic, "italic"), (.underline, "underline"), (.reverse, "reverse"),
    ]

    /// Keys for styles other than plain: ASCII letters and digits first, as they read best, then
    /// one-column letters (no marks, no modifier letters) from Latin-1 up to Armenian, stopping
    /// before the right-to-left scripts that would reorder a row on screen.
    private static let keys: [Character] = {
        let ascii = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let letterCategories: Set<Unicode.GeneralCategory> = [.uppercaseLetter, .lowercaseLetter, .otherLetter]
        let letters = (0xC0..<0x590).compactMap(Unicode.Scalar.init).filter {
            letterCategories.contains($0.properties.generalCategory) && TextWidth.of(Character($0)) == 1
        }
        return ascii + letters.map(Character.init)
    }()
}
