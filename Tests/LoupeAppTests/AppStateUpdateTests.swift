import Foundation
import LoupeApp
import LoupeKit
import LoupeTUI
import Testing

@Suite struct AppStateUpdateTests {
    @Test func tabBackTabAndDigitsMoveBetweenPanels() {
        var state = AppFixtures.state()
        AppFixtures.press([.tab, .tab], on: &state)
        #expect(state.focusedPanelID == .attention)
        AppFixtures.press([.backTab, .backTab, .backTab], on: &state)
        #expect(state.focusedPanelID == .profiles)
        AppFixtures.press([.backTab], on: &state)
        #expect(state.focusedPanelID == .review)
        AppFixtures.press([.character("4")], on: &state)
        #expect(state.focusedPanelID == .roofline)
        AppFixtures.press([.character("9")], on: &state)
        #expect(state.focusedPanelID == .profiles)
    }

    /// A workspace whose server is down says so in the status bar until it is back, and then
    /// says that it is.
    @Test func anUnreachableWorkspaceIsSaidInTheStatusBarUntilItIsBack() {
        var state = AppFixtures.state(width: 120)
        _ = state.update(.unreachable("unreachable (connection refused) · retrying"))
        let down = state.render().text().split(separator: "\n").dropLast().last ?? ""
        #expect(down.contains("⚠ unreachable (connection refused) · retrying"), "\(down)")
        _ = state.update(.unreachable(nil))
        #expect(!state.render().text().contains("⚠"))
        #expect(state.message == StatusMessage(text: "connection to the workspace is back", level: .ok))
    }

    @Test func helpOpensScrollsAndCloses() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("?")], on: &state)
        #expect(state.mode == .help)
        AppFixtures.press([.character("j"), .character("j"), .character("k")], on: &state)
        #expect(state.helpOffset == 1)
        AppFixtures.press([.escape], on: &state)
        #expect(state.mode == .normal)
    }

    @Test func commandLineRunsTheLineAsAJobAndRemembersIt() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace info", on: &state)
        let effects = AppFixtures.press([.enter], on: &state)
        #expect(effects == [.recordHistory("workspace info"), .runCommand(JobID(1), "workspace info")])
        #expect(state.mode == .normal)
        #expect(state.jobs.map(\.title) == ["workspace info"])
        #expect(state.history.entries.last == "workspace info")
    }

    @Test func multiLineOutputOpensTheOutputPaneAndEscClosesIt() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace info", on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(.jobFinished(JobID(1), CommandOutcome(output: "workspace  demo.sqlite\nschema     v1\n")))
        #expect(state.jobs.isEmpty)
        #expect(state.output.isVisible)
        #expect(state.focus == .output)
        // Shown whole in the pane: the status line says so, not its first line (a table's header).
        #expect(state.message == StatusMessage(text: "✓ workspace info: 2 lines below", level: .ok))
        AppFixtures.press([.escape], on: &state)
        #expect(!state.output.isVisible)
        #expect(state.focus == .panel)
    }

    @Test func aFailedCommandShowsItsErrorInTheStatusBar() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("wrkspace", on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            .jobFinished(
                JobID(1),
                CommandOutcome(error: "Unexpected argument 'wrkspace' (did you mean 'workspace'?)\nUsage: loupe")))
        #expect(state.message?.level == .error)
        #expect(state.message?.text.hasPrefix("✗ Unexpected argument 'wrkspace'") == true)
        #expect(state.output.isVisible)
    }

    @Test func quitAsksWhileAJobRuns() {
        var idle = AppFixtures.state()
        #expect(AppFixtures.press([.character("q")], on: &idle) == [.quit])

        var busy = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &busy)
        _ = AppFixtures.type("workspace vacuum", on: &busy)
        AppFixtures.press([.enter], on: &busy)
        #expect(AppFixtures.press([.character("q")], on: &busy).isEmpty)
        #expect(busy.mode == .confirmQuit)
        AppFixtures.press([.character("n")], on: &busy)
        #expect(busy.mode == .normal)
        AppFixtures.press([.control("c")], on: &busy)
        #expect(AppFixtures.press([.character("y")], on: &busy) == [.cancelJobs, .quit])
    }

    @Test func colonQAndSignalsQuit() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("q", on: &state)
        #expect(AppFixtures.press([.enter], on: &state).contains(.quit))
        #expect(state.update(.terminate(15)) == [.cancelJobs, .quit])
    }

    @Test func tabCompletesCommandsAndListsAlternatives() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("works", on: &state)
        AppFixtures.press([.tab], on: &state)
        #expect(state.commandLine.text == "workspace ")
        _ = AppFixtures.type("i", on: &state)
        AppFixtures.press([.tab], on: &state)
        #expect(state.commandLine.text == "workspace in")
        #expect(state.completions == ["info", "init"])
        _ = AppFixtures.type("fo --j", on: &state)
        AppFixtures.press([.tab], on: &state)
        #expect(state.commandLine.text == "workspace info --json ")
    }

    @Test func historyRecallsByPrefix() {
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("th", on: &state)
        AppFixtures.press([.up], on: &state)
        #expect(state.commandLine.text == "theme light")
        AppFixtures.press([.down], on: &state)
        #expect(state.commandLine.text == "th")
    }

    @Test func paletteFindsAndRunsCommands() {
        var state = AppFixtures.state()
        AppFixtures.press([.control("p")], on: &state)
        #expect(state.mode == .palette)
        _ = AppFixtures.type("theme li", on: &state)
        #expect(state.palette.matches().first?.item.title == "Theme: light")
        let effects = AppFixtures.press([.enter], on: &state)
        #expect(effects == [.recordHistory("theme light"), .runCommand(JobID(1), "theme light")])
    }

    @Test func paletteOpensTheCommandLineForCommandsThatNeedArguments() {
        var state = AppFixtures.state()
        AppFixtures.press([.control("p")], on: &state)
        _ = AppFixtures.type("notebook run", on: &state)
        #expect(AppFixtures.press([.enter], on: &state).isEmpty)
        #expect(state.mode == .commandLine)
        #expect(state.commandLine.text == "notebook run ")
    }

    @Test func paletteRunsAppActions() {
        var state = AppFixtures.state()
        AppFixtures.press([.control("p")], on: &state)
        _ = AppFixtures.type("go to evals", on: &state)
        AppFixtures.press([.enter], on: &state)
        #expect(state.focusedPanelID == .evals)
    }

    @Test func searchMovesTheSelectionAndNSteps() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks))
        AppFixtures.press([.character("/")], on: &state)
        #expect(state.mode == .search)
        _ = AppFixtures.type("roof", on: &state)
        AppFixtures.press([.enter], on: &state)
        let panel = state.panels[state.focusedPanel] as? NotebooksPanel
        #expect(panel?.list.selected == 1)
        #expect(state.searchQuery == "roof")
        AppFixtures.press([.character("n")], on: &state)
        #expect((state.panels[state.focusedPanel] as? NotebooksPanel)?.list.selected == 1)
        AppFixtures.press([.escape], on: &state)
        #expect(state.searchQuery.isEmpty)
    }

    @Test func searchWhereThereIsNoListSaysSo() {
        var state = AppFixtures.state()
        // The Roofline panel has no list to search.
        state.focusedPanel = state.panels.firstIndex { $0.id == .roofline }!
        AppFixtures.press([.character("/")], on: &state)
        #expect(state.message?.level == .warn)
        // The prompt still opens, so what is typed next is not read as the panel's keys (r reloads
        // the roofline, q quits).
        #expect(state.mode == .search)
        #expect(AppFixtures.type("rq", on: &state).isEmpty)
        #expect(state.searchEditor.text == "rq")
        AppFixtures.press([.escape], on: &state)
        #expect(state.mode == .normal)
    }

    @Test func openingANotebookAndRunningACellStartsItsCommands() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("6")], on: &state)
        // The first notebook is read as soon as the list arrives, shown beside it.
        #expect(
            state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks)) == [
                .ask(NotebooksPanel.OpenNotebook(path: "notebooks/getting-started.md"))
            ])
        #expect(AppFixtures.press([.enter], on: &state).isEmpty)
        _ = state.update(
            AppFixtures.answer(
                NotebooksPanel.OpenNotebook(path: "notebooks/getting-started.md"),
                (Notebook.parse(AppFixtures.notebookText))))
        // It opens at the top (title and introduction); enter there goes to the first cell.
        #expect((state.panels[state.focusedPanel] as? NotebooksPanel)?.document?.cell == -1)
        #expect(AppFixtures.press([.enter], on: &state).isEmpty)
        AppFixtures.press([.character("j")], on: &state)
        // On a scratch workspace of its own, with paths read from the notebook's repository.
        let scratch = CommandPlace(target: .scratch("getting-started.md"), directory: "notebooks")
        let effects = AppFixtures.press([.enter], on: &state)
        #expect(effects == [.runCommandIn(JobID(1), "workspace check", scratch)])
        _ = state.update(.jobFinished(JobID(1), CommandOutcome(output: "integrity     ok\nforeign keys  ok\n")))
        let panel = state.panels[state.focusedPanel] as? NotebooksPanel
        #expect(panel?.document?.runOutputs[1] == ["integrity     ok", "foreign keys  ok"])
        #expect(panel?.document?.running.isEmpty == true)
        // w: on the open workspace instead, said on the status line.
        AppFixtures.press([.character("w")], on: &state)
        #expect(state.message?.text.contains("run on the open workspace") == true)
        #expect(
            AppFixtures.press([.enter], on: &state) == [
                .runCommandIn(JobID(2), "workspace check", CommandPlace(target: .open, directory: "notebooks"))
            ])
        AppFixtures.press([.escape], on: &state)
        #expect((state.panels[state.focusedPanel] as? NotebooksPanel)?.focusOnDocument == false)
    }

    /// A theme chosen by a notebook on its scratch workspace is that workspace's, not the TUI's.
    @Test func aNotebookOnItsScratchWorkspaceDoesNotChangeTheTheme() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks))
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            AppFixtures.answer(
                NotebooksPanel.OpenNotebook(path: "notebooks/getting-started.md"),
                (Notebook.parse(AppFixtures.notebookText))))
        AppFixtures.press([.character("j"), .enter], on: &state)
        var light = Theme.builtInDefault
        light.name = "light"
        _ = state.update(
            .jobFinished(JobID(1), CommandOutcome(output: "theme light\n", requests: [.applyTheme(light)])))
        #expect(state.theme.name == Theme.builtInDefault.name)
    }

    @Test func clickingATabFocusesIt() throws {
        // Wide enough for every tab's name (at 80 columns the others show their numbers).
        var state = AppFixtures.state(width: 120, height: 36)
        let frame = state.render()
        let position = try #require(frame.find("Roofline"))
        _ = state.update(.input(.mouse(MouseEvent(.press, at: position))))
        #expect(state.focusedPanelID == .roofline)
    }

    @Test func clickingANotebookRowOpensIt() throws {
        var state = AppFixtures.state()
        AppFixtures.press([.character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks))
        let position = try #require(state.render().find("Roofline: w"))
        let effects = state.update(.input(.mouse(MouseEvent(.press, at: position))))
        #expect(effects == [.ask(NotebooksPanel.OpenNotebook(path: "notebooks/roofline.md"))])
    }

    @Test func themeRequestsApplyAndNoColorKeepsThemMonochrome() {
        var light = Theme.builtInDefault
        light.name = "light"
        var state = AppFixtures.state()
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("theme light", on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            .jobFinished(JobID(1), CommandOutcome(output: "theme: light\n", requests: [.applyTheme(light)])))
        #expect(state.theme.name == "light")
        #expect(!state.theme.isMonochrome)

        var mono = AppFixtures.state(monochrome: true)
        AppFixtures.press([.character(":")], on: &mono)
        _ = AppFixtures.type("theme light", on: &mono)
        AppFixtures.press([.enter], on: &mono)
        _ = mono.update(.jobFinished(JobID(1), CommandOutcome(requests: [.applyTheme(light)])))
        #expect(mono.theme.isMonochrome)
    }

    @Test func zoomResizeAndRedraw() {
        var state = AppFixtures.state()
        AppFixtures.press([.character("z")], on: &state)
        #expect(state.zoomed)
        AppFixtures.press([.escape], on: &state)
        #expect(!state.zoomed)
        _ = state.update(.input(.resize(Size(width: 120, height: 40))))
        #expect(state.render().size == Size(width: 120, height: 40))
        #expect(AppFixtures.press([.control("l")], on: &state) == [.redraw])
        #expect(AppFixtures.press([.control("z")], on: &state) == [.suspend])
    }

    @Test func jobProgressShowsWithAnETA() {
        var state = AppFixtures.state()
        _ = state.update(.tick(100))
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace vacuum", on: &state)
        AppFixtures.press([.enter], on: &state)
        _ = state.update(.jobProgress(JobID(1), JobProgress(completed: 1, total: 4)))
        _ = state.update(.tick(102))
        #expect(state.render().text().contains("workspace vacuum 25% ETA 6.0s"))
    }

    /// Status messages expire (errors later than the rest) and do not follow the user to
    /// another panel, unless they are errors.
    @Test func statusMessagesExpireAndStayWithTheirPanel() {
        var state = AppFixtures.state()
        _ = state.update(.tick(100))
        state.message = StatusMessage(text: "✓ wrote eval-run-1.csv", level: .ok)
        #expect(state.wantsTicks)
        _ = state.update(.tick(107))
        #expect(state.message != nil)
        _ = state.update(.tick(108.5))
        #expect(state.message == nil && !state.wantsTicks)

        state.message = StatusMessage(text: "No match for “shock”", level: .warn)
        AppFixtures.press([.character("2")], on: &state)
        #expect(state.message == nil)

        // An error expires later, and it too stays with the panel it was read in (the walkthrough's
        // `:trce` error shown over a Retrieval query); the log keeps it.
        state.message = StatusMessage(text: "✗ ingest failed", level: .error)
        _ = state.update(.tick(120))
        #expect(state.message != nil)
        _ = state.update(.tick(129))
        #expect(state.message == nil)
        state.message = StatusMessage(text: "✗ 2 unexpected arguments: 'trce'", level: .error)
        AppFixtures.press([.character("4")], on: &state)
        #expect(state.message == nil)
    }

    /// A panel's message answers its action: the panel's next key takes it away (the walkthrough's
    /// "✓ copied" over zoom and play, "run 2 is the baseline" through the compare view), while a
    /// message of the shell's own stays until it expires or another panel is shown.
    @Test func aPanelsMessageGoesAtItsNextAction() {
        var state = AppFixtures.state()
        let panel = state.panels[state.focusedPanel].id
        state.message = StatusMessage(text: "run 2 is the baseline", level: .ok, origin: panel)
        AppFixtures.press([.character("j")], on: &state)
        #expect(state.message == nil)
        state.message = StatusMessage(text: "✓ workspace  demo.sqlite", level: .ok)
        AppFixtures.press([.character("j")], on: &state)
        #expect(state.message?.text == "✓ workspace  demo.sqlite")
    }

    /// After a command, tab completes file and folder names, as a shell does (the repository's
    /// sample-data, read from the file system).
    @Test func tabCompletesFilePathsAfterACommand() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..")
            .standardized.path
        var state = AppFixtures.state()
        state.completePaths = { partial in
            PathCompletion.candidates(for: root + "/" + partial).map { String($0.dropFirst(root.count + 1)) }
        }
        AppFixtures.press([.character(":")], on: &state)
        _ = AppFixtures.type("workspace info sample-data/tr", on: &state)
        AppFixtures.press([.tab], on: &state)
        #expect(state.commandLine.text == "workspace info sample-data/traces/")
        _ = AppFixtures.type("otlp-g", on: &state)
        AppFixtures.press([.tab], on: &state)
        #expect(state.commandLine.text == "workspace info sample-data/traces/otlp-genai.jsonl ")
        // Several: the common part, and the names listed.
        AppFixtures.press([.control("u")], on: &state)
        _ = AppFixtures.type("workspace info sample-data/cranfield/q", on: &state)
        AppFixtures.press([.tab], on: &state)
        #expect(state.completions.contains("qrels.trec") && state.completions.contains("queries.jsonl"))
        // Commands still complete as commands.
        AppFixtures.press([.control("u")], on: &state)
        _ = AppFixtures.type("works", on: &state)
        AppFixtures.press([.tab], on: &state)
        #expect(state.commandLine.text == "workspace ")
    }
}
