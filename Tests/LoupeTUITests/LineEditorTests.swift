import LoupeTUI
import Testing

@Suite struct LineEditorTests {
    private func typed(_ text: String) -> LineEditor {
        var editor = LineEditor()
        for character in text { editor.handle(.character(character)) }
        return editor
    }

    @Test func cursorMovesByGraphemeCluster() {
        var editor = typed("ae\u{301}中😀")
        #expect(editor.cursor == 4)
        editor.handle(.left)
        editor.handle(.backspace)
        #expect(editor.text == "ae\u{301}😀")
        #expect(editor.text == "ae\u{301}😀")
        // ctrl+b steps over the whole "é" cluster; backspace then removes "a", never half of é.
        editor.handle(.control("b"))
        editor.handle(.backspace)
        #expect(editor.text == "e\u{301}😀")
    }

    @Test func emacsLineKeys() {
        var editor = typed("workspace info")
        editor.handle(.control("a"))
        #expect(editor.cursor == 0)
        editor.handle(.control("f"))
        editor.handle(.control("k"))
        #expect(editor.text == "w")
        editor.handle(.control("y"))
        #expect(editor.text == "workspace info")
        editor.handle(.control("e"))
        editor.handle(.control("w"))
        #expect(editor.text == "workspace ")
        editor.handle(.control("u"))
        #expect(editor.text.isEmpty)
    }

    @Test func wordMotions() {
        var editor = typed("theme  high-contrast")
        editor.handle(.alt("b"))
        #expect(editor.cursor == 12)
        editor.handle(.alt("b"))
        #expect(editor.cursor == 7)
        editor.handle(.alt("f"))
        #expect(editor.cursor == 11)
        editor.handle(.home)
        editor.handle(.alt("d"))
        #expect(editor.text == "  high-contrast")
    }

    @Test func deleteAtEndAndUnknownKeys() {
        var editor = typed("ab")
        editor.handle(.delete)
        #expect(editor.text == "ab")
        #expect(editor.handle(.function(5)) == false)
    }

    @Test func renderKeepsCursorVisible() {
        let editor = typed(String(repeating: "x", count: 30) + "END")
        var frame = Frame(size: Size(width: 12, height: 1))
        editor.render(into: &frame, area: frame.area, prompt: [Span(":")], style: .plain)
        #expect(frame.text().hasPrefix(":"))
        #expect(frame.text().contains("END"))
        #expect(frame[11, 0].style.attributes.contains(.reverse) || frame.find("END") != nil)
    }

    /// Shown without a cursor (a field not being edited), the text reads from its start and a cut
    /// end says so: the Attention panel's 42-token sentence showed only its tail.
    @Test func renderWithoutACursorShowsTheStart() {
        let editor = typed("START " + String(repeating: "x", count: 30) + " END")
        var frame = Frame(size: Size(width: 12, height: 1))
        editor.render(into: &frame, area: frame.area, prompt: [Span(":")], style: .plain, showCursor: false)
        #expect(frame.text() == ":START xxxx…")
        let short = typed("fits")
        var wide = Frame(size: Size(width: 12, height: 1))
        short.render(into: &wide, area: wide.area, prompt: [Span(":")], style: .plain, showCursor: false)
        #expect(wide.text() == ":fits")
    }

    /// A prefilled box entered with everything selected: typing, pasting and yanking replace the
    /// text, a deleting key clears it, a movement key keeps it; history sees nothing typed.
    @Test func aSelectedPrefillIsReplacedByTypingAndKeptByMovement() {
        var editor = LineEditor("the last query")
        editor.selectAll()
        #expect(editor.isAllSelected && editor.typedText == "")
        editor.handle(.character("h"))
        editor.handle(.character("i"))
        #expect(editor.text == "hi" && !editor.isAllSelected && editor.typedText == "hi")

        editor = LineEditor("the last query")
        editor.selectAll()
        editor.insert("pasted")
        #expect(editor.text == "pasted")

        editor = LineEditor("the last query")
        editor.selectAll()
        editor.handle(.backspace)
        #expect(editor.text == "" && !editor.isAllSelected)

        editor = LineEditor("the last query")
        editor.selectAll()
        editor.handle(.home)
        editor.handle(.character(">"))
        #expect(editor.text == ">the last query")

        editor = LineEditor("the last query")
        editor.selectAll()
        editor.handle(.end)
        editor.handle(.character("!"))
        #expect(editor.text == "the last query!")

        // Selected text is drawn reversed; nothing is selected in an empty box.
        editor = LineEditor("ab")
        editor.selectAll()
        var frame = Frame(size: Size(width: 10, height: 1))
        editor.render(into: &frame, area: frame.area, prompt: [Span(":")], style: .plain)
        #expect(frame[1, 0].style.attributes.contains(.reverse) && frame[2, 0].style.attributes.contains(.reverse))
        var empty = LineEditor()
        empty.selectAll()
        #expect(!empty.isAllSelected)
    }
}
