import LoupeBase

extension Frame {
    /// The frame as text: one line per row, wide glyphs once, trailing spaces removed.
    ///
    /// This is what golden files hold; it matches what `tmux capture-pane -p` prints for the
    /// same screen.
    package func text() -> String {
        (0..<height).map(rowText).joined(separator: "\n")
    }

    /// Row `y` as text, trailing spaces removed.
    package func rowText(_ y: Int) -> String {
        var line = ""
        let start = y * width
        for x in 0..<width where cells[start + x].width != 0 {
            line += cells[start + x].grapheme
        }
        while line.last == " " { line.removeLast() }
        return line
    }

    /// The first position whose row contains `needle` starting there, or nil.
    package func find(_ needle: String) -> Point? {
        for y in 0..<height {
            let line = rowText(y)
            if let range = line.firstRange(of: needle) {
                return Point(x: TextWidth.of(line[line.startIndex..<range.lowerBound]), y: y)
            }
        }
        return nil
    }
}
