import Foundation
import LoupeBase
import LoupeTUI
import LoupeTestSupport
import Testing

@Suite struct FrameGoldenTests {
    private static let title = Style(
        foreground: RGB(0x1E, 0x1E, 0x2E), background: RGB(0x89, 0xB4, 0xFA), attributes: .bold)
    private static let error = Style(foreground: RGB(0xF3, 0x8B, 0xA8), attributes: [.underline, .reverse])

    /// Eight columns, three rows: a bold title, plain text, an underlined reverse error.
    private static func sample() -> Frame {
        var frame = Frame(size: Size(width: 8, height: 3))
        frame.draw(" Loupe  ", at: Point(x: 0, y: 0), style: title)
        frame.draw("ok", at: Point(x: 0, y: 1), style: .plain)
        frame.draw("failed", at: Point(x: 2, y: 2), style: error)
        return frame
    }

    @Test func twoStylesGiveALegendInOrderOfFirstAppearanceAndOneKeyPerCell() {
        var frame = Frame(size: Size(width: 6, height: 2))
        frame.draw("ab", at: Point(x: 1, y: 0), style: Self.title)
        frame.draw("cd", at: Point(x: 4, y: 1), style: Self.error)
        let map = StyleMap(frame)
        #expect(
            map.text == """
                .: fg=default bg=default
                a: fg=#1e1e2e bg=#89b4fa bold
                b: fg=#f38ba8 bg=default underline reverse

                .aa...
                ....bb
                """)
    }

    @Test func theFirstStyleSeenTakesTheFirstKeyAndPlainIsAlwaysADot() {
        var frame = Frame(size: Size(width: 3, height: 1), style: Self.error)
        frame.draw("x", at: Point(x: 2, y: 0), style: .plain)
        let map = StyleMap(frame)
        #expect(map.legend.map(\.key) == ["a", "."])
        #expect(map.rows == ["aa."])
    }

    @Test func aStyleChangeChangesTheMapAndNamesTheRow() {
        let before = Self.sample()
        var after = before
        after.restyle(Rect(x: 1, y: 1, width: 1, height: 1), with: Style(attributes: .dim))
        #expect(after.text() == before.text())
        #expect(StyleMap(after) != StyleMap(before))
        #expect(StyleMap(after).rowsStyledDifferently(from: StyleMap(before)) == [1])
        #expect(StyleMap(after).columnsStyledDifferently(inRow: 1, from: StyleMap(before)) == [1])
        #expect(StyleMap(Self.sample()) == StyleMap(before))
    }

    @Test func theSameStylesUnderOtherKeysAreNoDifference() {
        let map = StyleMap(Self.sample())
        var relettered = map
        relettered.legend = map.legend.map { entry in
            StyleMap.Entry(key: entry.key == "a" ? "z" : entry.key, style: entry.style)
        }
        relettered.rows = map.rows.map { String($0.map { $0 == "a" ? "z" : $0 }) }
        #expect(relettered.text != map.text)
        #expect(relettered.rowsStyledDifferently(from: map).isEmpty)
    }

    @Test func bothColumnsOfAWideGlyphCarryItsLeadKey() {
        var frame = Frame(size: Size(width: 4, height: 1))
        frame.draw("漢", at: Point(x: 1, y: 0), style: Self.title)
        #expect(StyleMap(frame).rows == [".aa."])
    }

    @Test func parsingTheTextGivesTheMapBack() {
        let map = StyleMap(Self.sample())
        #expect(StyleMap(parsing: map.text) == map)
        #expect(StyleMap(parsing: map.text + "\n") == map)
        #expect(StyleMap(parsing: "no legend here") == nil)
    }

    @Test func keysGoPastTheASCIIAlphabetOneColumnEach() {
        var frame = Frame(size: Size(width: 100, height: 1))
        for x in 0..<100 { frame.put("x", x: x, y: 0, style: Style(foreground: RGB(UInt8(x), 0, 0))) }
        let map = StyleMap(frame)
        #expect(map.legend.count == 100)
        #expect(Set(map.rows[0]).count == 100)
        #expect(map.rows[0].allSatisfy { TextWidth.of($0) == 1 && $0 != "." && $0 != ":" })
    }

    @Test func aMissingGoldenIsRecordedAndReportedThenMatches() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = Golden.check(Self.sample(), named: "sample", in: directory, isRecording: false)
        #expect(first.count == 2)
        #expect(first.allSatisfy { $0.hasPrefix("recorded missing golden sample.") })
        let styles = try String(contentsOf: directory.appendingPathComponent("sample.styles.txt"), encoding: .utf8)
        #expect(styles == StyleMap(Self.sample()).text + "\n")
        #expect(Golden.check(Self.sample(), named: "sample", in: directory, isRecording: false).isEmpty)
    }

    @Test func recordingIsReportedEvenWhenNothingChanged() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = Golden.check(Self.sample(), named: "sample", in: directory, isRecording: false)
        let failures = Golden.check(Self.sample(), named: "sample", in: directory, isRecording: true)
        #expect(
            failures == [
                "recorded golden sample.txt (unchanged); re-run without RECORD_SNAPSHOTS=1 to check it",
                "recorded golden sample.styles.txt (unchanged); re-run without RECORD_SNAPSHOTS=1 to check it",
            ])
    }

    /// Keys follow first appearance, so the bold cells take `b` and the old style moves to `c`;
    /// only the cells whose style changed are marked.
    @Test func aStyleOnlyChangeFailsWithTheRowAndTheLegendEntriesInvolved() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = Golden.check(Self.sample(), named: "sample", in: directory, isRecording: false)
        var changed = Self.sample()
        changed.restyle(Rect(x: 2, y: 2, width: 2, height: 1), with: Style(attributes: .bold))
        let failures = Golden.check(changed, named: "sample", in: directory, isRecording: false)
        #expect(
            failures == [
                """
                golden sample.styles.txt differs in 1 row(s) (RECORD_SNAPSHOTS=1 rewrites it):
                y=2, first at x=2:
                  - ..bbbbbb
                  + ..bbcccc
                      ^^
                  - b: fg=#f38ba8 bg=default underline reverse
                  + b: fg=#f38ba8 bg=default bold underline reverse
                """
            ])
    }

    @Test func aTextChangeFailsWithALineDiff() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = Golden.check(Self.sample(), named: "sample", in: directory, isRecording: false)
        var changed = Self.sample()
        changed.draw("OK", at: Point(x: 0, y: 1), style: .plain)
        let failures = Golden.check(changed, named: "sample", in: directory, isRecording: false)
        #expect(failures == ["golden sample.txt differs (RECORD_SNAPSHOTS=1 rewrites it):\n  2 - ok\n  2 + OK"])
    }

    @Test func paddedTextKeepsTrailingSpaces() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = Golden.check(Self.sample(), named: "sample", in: directory, text: .padded, isRecording: false)
        let text = try String(contentsOf: directory.appendingPathComponent("sample.txt"), encoding: .utf8)
        #expect(text == " Loupe  \nok      \n  failed\n")
    }

    /// A crop stacks its areas in order, clipped to the frame, and keeps their styles.
    @Test func aCropStacksItsAreasAndKeepsTheirStyles() {
        let crop = Self.sample().cropped(to: [
            Rect(x: 0, y: 2, width: 8, height: 1), Rect(x: 0, y: 0, width: 8, height: 1),
            Rect(x: 6, y: 1, width: 5, height: 9),
        ])
        #expect(crop.size == Size(width: 8, height: 4))
        #expect(crop.text() == "  failed\n Loupe\n\ned")
        #expect(crop[2, 0].style == Self.error && crop[0, 1].style == Self.title)
    }

    /// A wide glyph cut by an area's edge leaves a blank in its style, not half a glyph.
    @Test func aCropBlanksAWideGlyphItsEdgeCuts() {
        var frame = Frame(size: Size(width: 6, height: 1))
        frame.draw("a界b界", at: Point(x: 0, y: 0), style: Self.title)
        let crop = frame.cropped(to: [Rect(x: 2, y: 0, width: 3, height: 1)])
        #expect(crop.text() == " b")
        #expect((0..<3).allSatisfy { crop[$0, 0].style == Self.title && !crop[$0, 0].isContinuation })
    }

    /// A golden no literal names, or one missing its styles file, is reported; an interpolated
    /// name covers the files its literal parts match.
    @Test func orphansAreGoldensNoTestNames() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let snapshots = directory.appendingPathComponent("__snapshots__")
        try FileManager.default.createDirectory(at: snapshots, withIntermediateDirectories: true)
        let source = #"""
            expectFrame(a, matchesGolden: "list-80x24")
            expectFrame(b, matchesGolden: "tokens-\(width)x\(height)\(mono ? "-mono" : "")")
            let word = "tokens"
            """#
        try source.write(to: directory.appendingPathComponent("T.swift"), atomically: true, encoding: .utf8)
        for name in ["list-80x24", "tokens-80x24-mono", "tokens-120x36", "list-120x36"] {
            for suffix in [".txt", ".styles.txt"] {
                try "".write(to: snapshots.appendingPathComponent(name + suffix), atomically: true, encoding: .utf8)
            }
        }
        try "".write(to: snapshots.appendingPathComponent("lone-1x1.txt"), atomically: true, encoding: .utf8)
        #expect(
            try Golden.orphans(in: snapshots, namedBy: directory) == [
                "list-120x36.styles.txt: unnamed", "list-120x36.txt: unnamed", "lone-1x1.txt: no lone-1x1.styles.txt",
                "lone-1x1.txt: unnamed",
            ])
    }

    @Test func everyGoldenBesideThisFileIsNamedByATest() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let orphans = try Golden.orphans(in: Golden.directory(besideTestFile: #filePath), namedBy: tests)
        #expect(orphans.isEmpty, "delete these goldens, or name them in a test: \(orphans)")
    }

    /// The committed goldens beside this file, through the entry point tests use.
    @Test func theSampleMatchesItsCommittedGoldens() {
        expectFrame(Self.sample(), matchesGolden: "frame-golden-sample-8x3")
    }

    private static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
