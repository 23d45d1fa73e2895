import LoupeTUI
import Testing

@Suite struct FrameTests {
    @Test func drawWritesAndClips() {
        var frame = Frame(size: Size(width: 6, height: 2))
        let written = frame.draw("hello world", at: Point(x: 1, y: 0), style: .plain)
        #expect(written == 5)
        #expect(frame.text() == " hell…\n")
    }

    @Test func textCutByTheClipEndsInAnEllipsis() {
        var frame = Frame(size: Size(width: 20, height: 1))
        frame.draw(
            "✗ 1 error · first: boom", at: Point(x: 2, y: 0), style: .plain, clip: Rect(x: 0, y: 0, width: 8, height: 1)
        )
        #expect(frame.text() == "  ✗ 1 e…")
    }

    @Test func aFillCutShortHasNoEllipsis() {
        var frame = Frame(size: Size(width: 6, height: 3))
        frame.draw(String(repeating: "─", count: 10), at: Point(x: 0, y: 0), style: .plain)
        frame.draw("ab" + String(repeating: " ", count: 10), at: Point(x: 0, y: 1), style: .plain)
        frame.draw("0" + String(repeating: "·", count: 10) + "9s", at: Point(x: 0, y: 2), style: .plain)
        #expect(frame.text() == "──────\nab\n0····…")
    }

    @Test func spansCutBetweenTwoSpansEndInAnEllipsis() {
        var frame = Frame(size: Size(width: 8, height: 2))
        frame.draw([Span("abcdefgh"), Span(" · ✗ 1 error")], at: Point(x: 0, y: 0))
        frame.draw([Span("abcdefgh"), Span("   ")], at: Point(x: 0, y: 1))
        #expect(frame.text() == "abcdefg…\nabcdefgh")
    }

    @Test func wideGlyphTakesTwoCellsAndNeverStraddlesTheEdge() {
        var frame = Frame(size: Size(width: 4, height: 1))
        frame.draw("a中文", at: Point(x: 0, y: 0), style: .plain)
        #expect(frame[1, 0].width == 2)
        #expect(frame[2, 0].isContinuation)
        #expect(frame[3, 0].grapheme == "…")
        #expect(frame.text() == "a中…")
    }

    @Test func overwritingHalfAWideGlyphBlanksTheOtherHalf() {
        var frame = Frame(size: Size(width: 4, height: 1))
        frame.draw("中文", at: Point(x: 0, y: 0), style: .plain)
        frame.draw("x", at: Point(x: 1, y: 0), style: .plain)
        #expect(frame.text() == " x文")
        #expect(frame[0, 0].width == 1)
    }

    @Test func escapeSequencesNeverReachACell() {
        var frame = Frame(size: Size(width: 10, height: 1))
        frame.draw("\u{1B}[31mred", at: Point(x: 0, y: 0), style: .plain)
        #expect(frame.text() == "␛[31mred")
        #expect(!frame.cells.contains { $0.grapheme.unicodeScalars.contains { $0.value == 0x1B } })
    }

    @Test func textWithoutBackgroundKeepsTheCellsBackground() {
        let blue = RGB(0, 0, 255)
        var frame = Frame(size: Size(width: 4, height: 1), style: Style(background: blue))
        frame.draw("ab", at: Point(x: 0, y: 0), style: Style(foreground: RGB(255, 255, 255)))
        #expect(frame[0, 0].style.background == blue)
        #expect(frame[0, 0].style.foreground == RGB(255, 255, 255))
    }

    @Test func findLocatesTextByColumn() {
        var frame = Frame(size: Size(width: 10, height: 2))
        frame.draw("中 needle", at: Point(x: 0, y: 1), style: .plain)
        #expect(frame.find("needle") == Point(x: 3, y: 1))
        #expect(frame.find("absent") == nil)
    }

    /// A light theme sets its own background: text, fills and canvas dots drawn without one keep
    /// it, so no cell falls back to the terminal's default (black patches on a dark terminal).
    @Test func stylesWithoutABackgroundKeepTheFramesBackground() {
        let white = RGB(255, 255, 255)
        var frame = Frame(size: Size(width: 6, height: 3), style: Style(background: white))
        frame.fill(Rect(x: 0, y: 0, width: 6, height: 1), style: Style(foreground: RGB(0, 0, 0)))
        frame.draw("ab", at: Point(x: 0, y: 1), style: Style(foreground: RGB(0, 0, 0)))
        frame.put("⠿", x: 3, y: 2, style: Style(foreground: RGB(9, 105, 218)))
        for y in 0..<3 {
            for x in 0..<6 { #expect(frame[x, y].style.background == white, "cell \(x),\(y)") }
        }
        // A background given is used.
        frame.fill(Rect(x: 0, y: 0, width: 1, height: 1), style: Style(background: RGB(1, 2, 3)))
        #expect(frame[0, 0].style.background == RGB(1, 2, 3))
    }
}
