import LoupeTUI
import Testing

@Suite struct FrameDiffTests {
    private static let size = Size(width: 6, height: 2)

    private static func frame(_ rows: [String], style: Style = .plain) -> Frame {
        var frame = Frame(size: size)
        for (y, row) in rows.enumerated() { frame.draw(row, at: Point(x: 0, y: y), style: style) }
        return frame
    }

    @Test func identicalFramesHaveNoChanges() {
        let frame = Self.frame(["hello", "漢字"])
        let diff = frame.diff(from: frame)
        #expect(!diff.isFullRedraw)
        #expect(diff.changes.isEmpty)
    }

    @Test func oneChangedCellIsTheOnlyChange() {
        let before = Self.frame(["hello", "world"])
        var after = before
        after.draw("W", at: Point(x: 0, y: 1), style: .plain)
        let diff = after.diff(from: before)
        #expect(!diff.isFullRedraw)
        #expect(diff.changes == [Frame.Change(x: 0, y: 1, cell: Cell("W"))])
    }

    @Test func noPreviousFrameRedrawsEveryCell() {
        let frame = Self.frame(["hello", "world"])
        let diff = frame.diff(from: nil)
        #expect(diff.isFullRedraw)
        #expect(diff.changes.count == 12)
        #expect(diff.changes.first == Frame.Change(x: 0, y: 0, cell: Cell("h")))
        #expect(diff.changes.last == Frame.Change(x: 5, y: 1, cell: Cell(" ")))
    }

    @Test func aSizeChangeRedrawsEveryCellEvenWhereTheyMatch() {
        let before = Self.frame(["hello", "world"])
        var after = Frame(size: Size(width: 6, height: 3))
        after.draw("hello", at: Point(x: 0, y: 0), style: .plain)
        let diff = after.diff(from: before)
        #expect(diff.isFullRedraw)
        #expect(diff.changes.count == 18)
        #expect(diff.changes.first == Frame.Change(x: 0, y: 0, cell: Cell("h")))
    }

    @Test(arguments: ["漢", "🔍"])
    func aChangedWideGlyphIsItsLeadCellOnly(_ glyph: String) {
        let before = Self.frame(["ab字", ""])
        var after = before
        after.draw(glyph, at: Point(x: 2, y: 0), style: .plain)
        #expect(after[3, 0].isContinuation)
        let diff = after.diff(from: before)
        #expect(diff.changes == [Frame.Change(x: 2, y: 0, cell: Cell(glyph, width: 2))])
    }

    @Test func aFullRedrawSkipsContinuationCells() {
        let frame = Self.frame(["漢字", ""])
        let columns = frame.diff(from: nil).changes.filter { $0.y == 0 }.map(\.x)
        #expect(columns == [0, 2, 4, 5])
    }

    @Test func aStyleOnlyChangeIsAChange() {
        let before = Self.frame(["hello", ""])
        var bold = before
        bold.restyle(Rect(x: 1, y: 0, width: 1, height: 1), with: Style(attributes: .bold))
        #expect(
            bold.diff(from: before).changes == [
                Frame.Change(x: 1, y: 0, cell: Cell("e", style: Style(attributes: .bold)))
            ])

        var red = before
        red.restyle(Rect(x: 4, y: 0, width: 1, height: 1), with: Style(foreground: RGB(255, 0, 0)))
        #expect(red.diff(from: before).changes.map { [$0.x, $0.y] } == [[4, 0]])
    }
}
