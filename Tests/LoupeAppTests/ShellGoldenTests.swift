import LoupeApp
import LoupeKit
import LoupeTUI
import LoupeTestSupport
import Testing

/// The whole shell rendered to text and compared with `__snapshots__/*.txt`.
/// `RECORD_SNAPSHOTS=1 swift test` rewrites the files after a deliberate change.
@Suite struct ShellGoldenTests {
    private func check(_ state: AppState, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        expectFrame(state.render(), matchesGolden: name, sourceLocation: sourceLocation)
    }

    @Test func emptyStatePanelAt80x24() { check(AppFixtures.state(), "shell-traces-80x24") }

    @Test func tabBarKeepsEveryNameAt80Columns() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("4")], on: &state)
        let tabs = state.render().text().split(separator: "\n")[0]
        for (index, panel) in state.panels.enumerated() {
            let name = index == state.focusedPanel ? panel.title : panel.id.shortTitle
            #expect(tabs.contains("\(index + 1) \(name)"), "\(tabs)")
        }
    }

    @Test func notebooksAt160x48() {
        var state = AppFixtures.state(width: 160, height: 48)
        AppFixtures.press([.character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks))
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            AppFixtures.answer(
                NotebooksPanel.OpenNotebook(path: "notebooks/getting-started.md"),
                (Notebook.parse(AppFixtures.notebookText))))
        check(state, "shell-notebooks-160x48")
    }

    @Test func notebooksAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks))
        check(state, "shell-notebooks-80x24")
    }

    @Test func helpOverlayAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("?")], on: &state)
        check(state, "help-80x24")
    }

    @Test func paletteAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.control("p")], on: &state)
        _ = AppFixtures.type("ws", on: &state)
        check(state, "palette-80x24")
    }

    @Test func commandOutputAndErrorAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("wrkspace info", on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            .jobFinished(
                JobID(1),
                CommandOutcome(
                    error:
                        "2 unexpected arguments: 'wrkspace', 'info' (did you mean 'workspace'?)\nUsage: loupe [--workspace <path>] [--theme <name>] <subcommand>"
                )))
        check(state, "output-error-80x24")
    }

    @Test func commandLineWithCompletionsAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace i", on: &state)
        AppFixtures.press([.tab], on: &state)
        check(state, "command-line-80x24")
    }

    @Test func confirmQuitAt80x24() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace vacuum", on: &state)
        AppFixtures.press([.enter, .character("q")], on: &state)
        check(state, "confirm-quit-80x24")
    }

    @Test func tooSmallSaysSo() {
        check(AppFixtures.state(width: 40, height: 10), "too-small-40x10")
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
