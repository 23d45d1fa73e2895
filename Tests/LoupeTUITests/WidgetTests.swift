import LoupeBase
import LoupeTUI
import Testing

@Suite struct WidgetTests {
    let theme = Theme.builtInDefault

    @Test func blockDrawsBorderAndTitle() {
        var frame = Frame(size: Size(width: 12, height: 3))
        let inner = Block(title: "Runs", focused: true).render(into: &frame, area: frame.area, theme: theme)
        #expect(inner == Rect(x: 1, y: 1, width: 10, height: 1))
        #expect(frame.text() == "╭ Runs ────╮\n│          │\n╰──────────╯")
    }

    @Test func listScrollsToTheSelectionAndMarksIt() {
        var frame = Frame(size: Size(width: 8, height: 3))
        var state = ListState(selected: 5)
        let items = (0..<8).map { [Span("item\($0)")] }
        ListView(items: items).render(into: &frame, area: frame.area, state: &state, theme: theme)
        #expect(state.offset == 3)
        #expect(frame.text() == " item3 │\n item4 ┃\n▌item5 │")
        #expect(frame[1, 2].style.background == theme.color(.selectionBackground))
    }

    @Test func listHighlightsSearchMatches() {
        var frame = Frame(size: Size(width: 12, height: 1))
        var state = ListState(selected: 1)
        ListView(items: [[Span("alpha beta")]], highlight: "BETA").render(
            into: &frame, area: frame.area, state: &state, theme: theme)
        #expect(frame[7, 0].style.foreground == theme.color(.match))
        #expect(frame[2, 0].style.foreground != theme.color(.match))
    }

    @Test func tableShowsTheSortIndicatorAndAlignsColumns() {
        var frame = Frame(size: Size(width: 20, height: 3))
        var state = ListState()
        let table = TableView(
            columns: [
                TableColumn("name", width: .fill(1)), TableColumn("ms", width: .length(6), alignment: .trailing),
            ],
            rows: [["sgemm", "12.5"], ["gelu", "0.3"]], sort: TableSort(column: 1, ascending: false)
        )
        table.render(into: &frame, area: frame.area, state: &state, theme: theme)
        #expect(frame.rowText(0) == " name           ms ▼")
        #expect(frame.rowText(1) == "▌sgemm          12.5")
        #expect(TableSort(column: 1, ascending: false).toggled(to: 1).ascending)
        #expect(!TableSort(column: 1, ascending: true).toggled(to: 0).ascending)
    }

    @Test func textViewWrapsAndClampsTheOffset() {
        var frame = Frame(size: Size(width: 6, height: 2))
        let view = TextView(text: "abcdefghij", style: .plain)
        #expect(view.displayRows(width: 5).map(\.plainText) == ["abcde", "fghij"])
        let result = view.render(into: &frame, area: frame.area, offset: 99, theme: theme)
        #expect(result.offset == 0)
        #expect(frame.rowText(0) == "abcde")
    }

    @Test func gaugeFillsInEighths() {
        var frame = Frame(size: Size(width: 10, height: 1))
        Gauge(fraction: 0.5, label: "50%").render(into: &frame, area: frame.area, theme: theme)
        #expect(frame.text() == "███░░░ 50%")
    }

    @Test func sparklineScalesBetweenMinAndMax() {
        #expect(Sparkline(values: [0, 1, 2, 3, 4, 5, 6, 7]).glyphs(width: 8) == "▁▂▃▄▅▆▇█")
        #expect(Sparkline(values: [5, 5]).glyphs(width: 4) == "▄▄")
        #expect(Sparkline(values: [1, 2, 3]).glyphs(width: 2) == "▁█")
    }

    @Test func brailleCanvasSetsDotsAndLines() {
        var canvas = BrailleCanvas(columns: 2, rows: 1)
        canvas.line(from: Point(x: 0, y: 0), to: Point(x: 3, y: 3), style: .plain)
        var frame = Frame(size: Size(width: 2, height: 1))
        canvas.render(into: &frame, origin: Point(x: 0, y: 0))
        // Dots (0,0),(1,1) in the first cell; (2,2),(3,3) in the second.
        #expect(frame.text() == "⠑⢄")
        canvas.set(x: 99, y: 99, style: .plain)
    }

    @Test func heatmapUsesHalfBlocksInColourAndShadesInMono() {
        let heatmap = Heatmap(values: [[0, 1], [1, 0], [0.5, 0.5]])
        var colour = Frame(size: Size(width: 2, height: 2))
        heatmap.render(into: &colour, origin: Point(x: 0, y: 0), theme: theme)
        #expect(colour.text() == "▀▀\n▀▀")
        #expect(colour[0, 0].style.foreground == theme.heatColor(0))
        #expect(colour[0, 0].style.background == theme.heatColor(1))
        var mono = Frame(size: Size(width: 2, height: 3))
        heatmap.render(into: &mono, origin: Point(x: 0, y: 0), theme: theme.monochrome())
        #expect(mono.text() == "·█\n█·\n▒▒")
    }

    @Test func tabBarRectsMatchWhatIsDrawn() {
        let bar = TabBar(titles: ["Traces", "Evals"], selected: 1)
        let rects = bar.tabRects(in: Rect(x: 0, y: 0, width: 40, height: 1))
        #expect(rects == [Rect(x: 1, y: 0, width: 10, height: 1), Rect(x: 12, y: 0, width: 9, height: 1)])
        // Too narrow to space them: they touch, then the unselected ones keep only their number.
        let touching = bar.tabRects(in: Rect(x: 0, y: 0, width: 20, height: 1))
        #expect(touching == [Rect(x: 1, y: 0, width: 10, height: 1), Rect(x: 11, y: 0, width: 9, height: 1)])
        let narrow = bar.tabRects(in: Rect(x: 0, y: 0, width: 14, height: 1))
        #expect(narrow == [Rect(x: 1, y: 0, width: 3, height: 1), Rect(x: 4, y: 0, width: 9, height: 1)])
        var frame = Frame(size: Size(width: 14, height: 1))
        bar.render(into: &frame, area: Rect(x: 0, y: 0, width: 14, height: 1), theme: theme)
        #expect(frame.text() == "  1  2 Evals")
        // Still too narrow: what does not fit is left out.
        #expect(bar.tabRects(in: Rect(x: 0, y: 0, width: 8, height: 1))[1].isEmpty)
    }

    @Test func tabBarKeepsTheTitlesOneSpaceApartBeforeDroppingThem() {
        let bar = TabBar(titles: ["Traces", "Evals"], selected: 1)
        let area = Rect(x: 0, y: 0, width: 18, height: 1)
        #expect(
            bar.tabRects(in: area) == [Rect(x: 1, y: 0, width: 8, height: 1), Rect(x: 10, y: 0, width: 7, height: 1)])
        var frame = Frame(size: Size(width: 18, height: 1))
        bar.render(into: &frame, area: area, theme: theme)
        #expect(frame.text() == " 1 Traces 2 Evals")
        // The selected tab is padded over the spaces beside it.
        #expect(frame[9, 0].style == theme.tab(active: true) && frame[17, 0].style == theme.tab(active: true))
        #expect(frame[1, 0].style == theme.key)
    }

    @Test func tabBarShowsShortTitlesBeforeOnlyNumbers() {
        let bar = TabBar(
            titles: ["Traces", "Retrieval", "Attention", "Roofline"], shortTitles: ["Traces", "Retr", "Attn", "Roof"],
            selected: 2)
        var frame = Frame(size: Size(width: 36, height: 1))
        bar.render(into: &frame, area: Rect(x: 0, y: 0, width: 36, height: 1), theme: theme)
        // The selected tab keeps its whole title, padded over the spaces beside it.
        #expect(frame.text() == " 1 Traces 2 Retr 3 Attention 4 Roof")
        #expect(frame[16, 0].style == theme.tab(active: true) && frame[28, 0].style == theme.tab(active: true))
        #expect(frame[29, 0].style == theme.key)
        let rects = bar.tabRects(in: Rect(x: 0, y: 0, width: 36, height: 1))
        #expect(rects.map(\.width) == [8, 6, 11, 6] && rects[3].x == 29)
        // Narrower still, the tabs not selected keep only their numbers.
        var narrow = Frame(size: Size(width: 26, height: 1))
        bar.render(into: &narrow, area: Rect(x: 0, y: 0, width: 26, height: 1), theme: theme)
        #expect(narrow.text() == "  1  2  3 Attention  4")
    }
}

@Suite struct TextViewWrapTests {
    @Test func wrapsAtWordBoundariesAndCutsOverlongWords() {
        let view = TextView(lines: [[Span("creates the file or brings an older one")]])
        #expect(view.displayRows(width: 16).map(\.plainText) == ["creates the ", "file or brings ", "an older one"])
        let long = TextView(lines: [[Span("abcdefghij kl")]])
        #expect(long.displayRows(width: 4).map(\.plainText) == ["abcd", "efgh", "ij ", "kl"])
    }

    @Test func keepsStylesAcrossTheBreak() {
        let bold = Style(attributes: .bold)
        let rows = TextView(lines: [[Span("aa "), Span("bb cc", bold)]]).displayRows(width: 5)
        #expect(rows.map(\.plainText) == ["aa ", "bb cc"])
        #expect(rows.last?.last?.style == bold)
    }
}

@Suite struct SpanTruncationTests {
    @Test func cutLinesEndInAnEllipsis() {
        let line = [Span("key  ", .plain), Span("Next span of any kind", .plain)]
        #expect(line.truncated(toColumns: 12).plainText == "key  Next s…")
        #expect(line.truncated(toColumns: 26) == line)
    }

    /// Cut exactly where one span ends, the line still says it was cut.
    @Test func aCutAtASpanBoundaryStillEndsInAnEllipsis() {
        let line = [Span("key  ", .plain), Span("help", .plain)]
        #expect(line.truncated(toColumns: 5).plainText == "key …")
        #expect(line.truncated(toColumns: 1).plainText == "…")
    }
}
