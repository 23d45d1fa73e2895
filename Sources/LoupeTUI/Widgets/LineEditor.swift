import LoupeBase

/// A one-line text editor with a grapheme-cluster cursor and emacs-style keys.
///
/// It is a value: ``handle(_:)`` mutates it and says whether the key was consumed, so the
/// `:` line, the palette and search prompts share one implementation and are tested without a
/// terminal. Keys: ←/→ ctrl+b/f by grapheme, alt+b/f by word, home/end ctrl+a/e, backspace,
/// del ctrl+d, ctrl+k kill to end, ctrl+u kill to start, ctrl+w kill the previous word,
/// ctrl+y yank the last kill.
///
/// A prefilled box (the last query, an example sentence) is entered with ``selectAll()``: typing
/// or pasting then replaces the text and backspace clears it, as in every search box, while a
/// movement key keeps it and drops the selection.
package struct LineEditor: Hashable, Sendable {
    package private(set) var graphemes: [Character]
    package private(set) var cursor: Int
    private var killBuffer: String
    /// True while the whole text is selected.
    package private(set) var isAllSelected = false

    package init(_ text: String = "") {
        graphemes = Array(text)
        cursor = graphemes.count
        killBuffer = ""
    }

    package var text: String { String(graphemes) }
    package var isEmpty: Bool { graphemes.isEmpty }

    /// What the user typed: empty while the prefilled text is only selected (history recall
    /// matches by it, so ↑ walks the whole history then).
    package var typedText: String { isAllSelected ? "" : text }

    /// Replaces the text and puts the cursor at its end.
    package mutating func setText(_ text: String) {
        graphemes = Array(text)
        cursor = graphemes.count
        isAllSelected = false
    }

    /// Selects the whole text (nothing when it is empty), with the cursor at its end.
    package mutating func selectAll() {
        cursor = graphemes.count
        isAllSelected = !graphemes.isEmpty
    }

    package mutating func insert(_ text: String) {
        if isAllSelected { clear() }
        let new = Array(text.filter { !$0.isNewline })
        graphemes.insert(contentsOf: new, at: cursor)
        cursor += new.count
    }

    /// Applies an editing key; false when the key is not an editing key.
    @discardableResult
    package mutating func handle(_ key: Key) -> Bool {
        if isAllSelected {
            switch key {
            case .character, .control("y"): break  // replaces the selection (insert)
            case .backspace, .control("h"), .delete, .control("d"), .control("k"), .control("u"), .control("w"),
                .alt("d"):
                kill(0..<graphemes.count)
                isAllSelected = false
                return true
            case .left, .control("b"), .home, .control("a"), .alt("b"), .alt("B"):
                isAllSelected = false
                cursor = 0
                return true
            case .right, .control("f"), .end, .control("e"), .alt("f"), .alt("F"):
                isAllSelected = false
                return true
            default: return false
            }
        }
        switch key {
        case .character(let c): insert(String(c))
        case .left, .control("b"): cursor = max(0, cursor - 1)
        case .right, .control("f"): cursor = min(graphemes.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = graphemes.count
        case .alt("b"), .alt("B"): cursor = previousWordStart()
        case .alt("f"), .alt("F"): cursor = nextWordEnd()
        case .backspace, .control("h"):
            guard cursor > 0 else { return true }
            graphemes.remove(at: cursor - 1)
            cursor -= 1
        case .delete, .control("d"):
            guard cursor < graphemes.count else { return true }
            graphemes.remove(at: cursor)
        case .control("k"): kill(cursor..<graphemes.count)
        case .control("u"): kill(0..<cursor)
        case .control("w"): kill(previousWordStart()..<cursor)
        case .alt("d"): kill(cursor..<nextWordEnd())
        case .control("y"): insert(killBuffer)
        default: return false
        }
        return true
    }

    private mutating func clear() {
        graphemes = []
        cursor = 0
        isAllSelected = false
    }

    private mutating func kill(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        killBuffer = String(graphemes[range])
        graphemes.removeSubrange(range)
        cursor = range.lowerBound
    }

    private func isWordCharacter(_ c: Character) -> Bool { c.isLetter || c.isNumber || c == "_" }

    private func previousWordStart() -> Int {
        var index = cursor
        while index > 0, !isWordCharacter(graphemes[index - 1]) { index -= 1 }
        while index > 0, isWordCharacter(graphemes[index - 1]) { index -= 1 }
        return index
    }

    private func nextWordEnd() -> Int {
        var index = cursor
        while index < graphemes.count, !isWordCharacter(graphemes[index]) { index += 1 }
        while index < graphemes.count, isWordCharacter(graphemes[index]) { index += 1 }
        return index
    }

    /// Draws `prompt` then the text, scrolled so the cursor stays visible; the cursor cell is
    /// drawn reversed when `showCursor` is on.
    package func render(into frame: inout Frame, area: Rect, prompt: [Span], style: Style, showCursor: Bool = true) {
        guard area.width > 0, area.height > 0 else { return }
        frame.fill(area, style: style)
        let promptWidth = frame.draw(prompt, at: Point(x: area.x, y: area.y), clip: area)
        let room = area.width - promptWidth - 1
        guard room > 0 else { return }
        var widths = graphemes.map { TextWidth.of(UntrustedText.sanitized(String($0))) }
        widths.append(1)
        // While editing, the text scrolls to keep the cursor in view; shown without a cursor it
        // reads from its start, and a cut end is marked "…" (a long sentence showed its tail).
        var start = 0
        if showCursor {
            var used = widths[..<cursor].reduce(0, +) + widths[cursor]
            while used > room, start < cursor {
                used -= widths[start]
                start += 1
            }
        }
        let cut = !showCursor && widths[..<graphemes.count].reduce(0, +) > room
        var x = area.x + promptWidth
        for index in start...graphemes.count {
            let glyph = index < graphemes.count ? String(graphemes[index]) : " "
            let width = widths[index]
            if cut, x + width > area.maxX - 1 {
                frame.draw("…", at: Point(x: x, y: area.y), style: style, clip: area)
                break
            }
            if x + width > area.maxX { break }
            let selected = isAllSelected && index < graphemes.count
            let cellStyle = (showCursor && index == cursor) || (showCursor && selected) ? style.adding(.reverse) : style
            frame.draw(glyph, at: Point(x: x, y: area.y), style: cellStyle, clip: area)
            x += width
        }
    }
}
