import Foundation
import LoupeApp
import LoupeKit
import LoupeTUI
import LoupeTestSupport
import Testing

/// The shell's own parts compared with `__snapshots__/*.txt`: the tab bar, the status line and
/// the footer on the whole screen once per size (panel goldens hold only the panel's area), and
/// the output pane, the command line and the overlays each in the part of the screen they use.
/// `RECORD_SNAPSHOTS=1 swift test` rewrites the files after a deliberate change.
@Suite struct ShellGoldenTests {
    private func check(
        _ state: AppState, _ name: String, _ part: ScreenPart = .screen,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expectScreen(state, part, matchesGolden: name, sourceLocation: sourceLocation)
    }

    /// A renamed or deleted test leaves no golden behind.
    @Test func everyGoldenIsNamedByATest() throws {
        let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let orphans = try Golden.orphans(in: Golden.directory(besideTestFile: #filePath), namedBy: tests)
        #expect(orphans.isEmpty, "delete these goldens, or name them in a test: \(orphans)")
    }

    @Test func emptyStatePanelAt80x24() { check(AppFixtures.state(), "shell-traces-80x24") }

    /// At 120 columns the tabs have their full names and the app's name; the status line shows
    /// the focused panel and a running job.
    @Test func notebooksWithAJobAt120x36() {
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace vacuum", on: &state)
        AppFixtures.press([.enter, .character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks))
        check(state, "shell-notebooks-120x36")
    }

    @Test func tabBarKeepsEveryNameAt80Columns() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("4")], on: &state)
        let tabs = state.render().text().split(separator: "\n")[0]
        for (index, panel) in state.panels.enumerated() {
            let name = index == state.focusedPanel ? panel.title : panel.id.shortTitle
            #expect(tabs.contains("\(index + 1) \(name)"), "\(tabs)")
        }
    }

    @Test func helpOverlayAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("?")], on: &state)
        check(state, "help-80x24")
    }

    @Test func helpMarksCutDescriptionsWithAnEllipsis() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("?")], on: &state)
        let frame = state.render()
        // At 80×24 the overlay's text ends at column 74, beside its scrollbar: a description that
        // reaches it was cut and says so.
        let reaching = (2..<19).filter { frame[74, $0].grapheme != " " }
        #expect(!reaching.isEmpty)
        for y in reaching { #expect(frame[74, y].grapheme == "…", "\(frame.text().split(separator: "\n")[y])") }
    }

    @Test func paletteAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.control("p")], on: &state)
        _ = AppFixtures.type("ws", on: &state)
        check(state, "palette-80x24", .body)
    }

    @Test func commandOutputAndErrorAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("wrkspace info", on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            .jobFinished(
                JobID(1),
                CommandOutcome(error: "unknown command 'wrkspace' (did you mean 'workspace'?)")))
        check(state, "output-error-80x24", .output)
    }

    /// The state after `:line` ran and printed `output`.
    private func ran(_ line: String, printing output: String, width: Int = 80, height: Int = 24) -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type(line, on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(.jobFinished(JobID(1), CommandOutcome(output: output)))
        return state
    }

    @Test func aOneLineResultTakesOneLineOfThePane() {
        let state = ran("theme light", printing: "theme: light\n")
        let rows = state.render().text().split(separator: "\n", omittingEmptySubsequences: false)
        let title = rows.firstIndex { $0.contains("Output: :theme light") }
        #expect(title.map { rows[$0 + 1].contains("theme: light") && rows[$0 + 2].hasPrefix("╰") } == true)
        check(state, "output-one-line-80x24", .output)
    }

    static let traceList = """
           id  format     steps  spans  errors   duration    tokens in/out       cost  name
            1  inspect        4     12       0      25 ms            97/59   no price  arith · q1 · epoch 1
            2  inspect        4     12       0      17 ms           103/61   no price  arith · q2 · epoch 1
            7  openai-ag      5     12       0     176 ms           359/44   no price  Support desk
            9  otlp           5      6       1     4.21 s         1485/102   no price  invoke_agent cranfield-qa
           12  swe-agent     10     11       0          —         9120/412    $0.0184  We're currently solving the following issue

        """

    /// A table wider than the pane keeps one row per line, cut with "…", instead of wrapping.
    @Test func tablesAreCutNotWrapped() {
        let state = ran("trace list", printing: Self.traceList)
        let rows = state.render().text().split(separator: "\n")
        // The pane's text is 75 columns wide, between "│ " and its scrollbar.
        for line in Self.traceList.split(separator: "\n") {
            let cut = "│ " + line.prefix(74) + "…"
            #expect(rows.contains { $0.hasPrefix(cut) }, "\(cut)")
        }
        check(state, "output-table-80x24", .output)
    }

    /// A one-line error shows on the status line; one the status line would cut (its
    /// suggestion last) opens the output pane as well.
    @Test func anErrorTheStatusLineWouldCutOpensThePane() {
        func failed(_ line: String, _ error: String) -> String {
            var state = AppFixtures.state()
            AppFixtures.press([.character(":")], on: &state)
            _ = AppFixtures.type(line, on: &state)
            AppFixtures.press([.enter], on: &state)
            _ = state.update(.jobFinished(JobID(1), CommandOutcome(error: error)))
            return state.render().text()
        }
        let short = failed("trce", "unknown command 'trce' (did you mean 'trace'?)")
        #expect(short.contains("✗ unknown command 'trce' (did you mean 'trace'?)") && !short.contains("Output:"))
        let long = failed("workspace inof", "unknown command 'workspace inof' (did you mean 'workspace info'?)")
        #expect(long.contains("│ unknown command 'workspace inof' (did you mean 'workspace info'?) "))
    }

    @Test func commandLineWithCompletionsAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace i", on: &state)
        AppFixtures.press([.tab], on: &state)
        check(state, "command-line-80x24", .bars)
    }

    @Test func confirmQuitAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace vacuum", on: &state)
        AppFixtures.press([.enter, .character("q")], on: &state)
        check(state, "confirm-quit-80x24", .body)
    }

    @Test func tooSmallSaysSo() {
        check(AppFixtures.state(width: 40, height: 10), "too-small-40x10")
    }

    /// The walkthrough saw the terminal's black at the right end of the light theme's bars: that
    /// was `tmux capture-pane` dropping trailing blanks (`-N` keeps them). Every cell of the bars
    /// has the theme's own background, at 120 and 80 columns.
    @Test(arguments: [Size(width: 120, height: 36), Size(width: 80, height: 24)])
    func theLightThemePaintsEveryCellOfTheBars(size: Size) throws {
        let themes = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("themes").path
        let light = try ThemeLoader(searchDirectories: [themes]).load("light")
        var state = ran("theme light", printing: "theme: light\n", width: size.width, height: size.height)
        state.theme = light
        let frame = state.render()
        let bar = try #require(light.color(.statusBackground))
        let background = try #require(light.color(.background))
        let activeTab = try #require(light.color(.tabActiveBackground))
        for x in 0..<size.width {
            #expect([bar, activeTab].contains(frame[x, 0].style.background), "tab bar, x=\(x)")
            #expect(frame[x, size.height - 2].style.background == bar, "status line, x=\(x)")
            #expect(frame[x, size.height - 1].style.background == background, "footer, x=\(x)")
        }
    }

    @Test func monoFramesCarryNoColour() {
        var state = AppFixtures.state(monochrome: true)
        AppFixtures.press([.character("?")], on: &state)
        let frame = state.render()
        #expect(frame.cells.allSatisfy { $0.style.foreground == nil && $0.style.background == nil })
        #expect(frame.cells.contains { $0.style.attributes.contains(.reverse) })
    }

    @Test func untrustedOutputIsShownSanitised() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace info", on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            .jobFinished(JobID(1), CommandOutcome(output: "line one\n\u{1B}[2J\u{1B}]0;title\u{07}evil\n")))
        let text = state.render().text()
        #expect(text.contains("␛[2J␛]0;title␇evil"))
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B })
    }
}
