import LoupeTUI
import Testing

@Suite struct LayoutTests {
    @Test func splitServesFixedSlotsThenSharesTheRest() {
        let parts = Rect(x: 0, y: 0, width: 100, height: 10).split(.horizontal, [.length(20), .fill(1), .fill(3)])
        #expect(parts.map(\.width) == [20, 20, 60])
        #expect(parts.map(\.x) == [0, 20, 40])
    }

    @Test func splitNeverLeavesTheRectangle() {
        let parts = Rect(x: 2, y: 3, width: 10, height: 5).split(.vertical, [.length(4), .percentage(50), .fill(1)])
        #expect(parts.map(\.height) == [4, 1, 0])
        #expect(parts.last!.maxY <= 8)
    }

    @Test func percentageAndRemainders() {
        let parts = Rect(x: 0, y: 0, width: 7, height: 1).split(.horizontal, [.fill(1), .fill(1)])
        #expect(parts.map(\.width) == [3, 4])
        #expect(
            Rect(x: 0, y: 0, width: 80, height: 1).split(.horizontal, [.percentage(25), .fill(1)]).map(\.width) == [
                20, 60,
            ])
    }

    @Test func rectHelpers() {
        let rect = Rect(x: 1, y: 1, width: 10, height: 4)
        #expect(rect.inset(dx: 1, dy: 1) == Rect(x: 2, y: 2, width: 8, height: 2))
        #expect(rect.contains(Point(x: 10, y: 4)))
        #expect(!rect.contains(Point(x: 11, y: 4)))
        #expect(rect.centered(width: 4, height: 2) == Rect(x: 4, y: 2, width: 4, height: 2))
        #expect(Rect(x: 0, y: 0, width: -3, height: 2).isEmpty)
    }
}
