import LoupeApp
import LoupeKit
import LoupeTUI
import Testing

/// The Notebooks panel: which file each listed notebook is, and how a run of its cells went.
@Suite struct NotebooksPanelTests {
    /// A notebook from the checkout's folder, listed beside the working directory's.
    static let fromCheckout = NotebookSummary(
        path: "/src/loupe/notebooks/roofline.md", title: "Roofline: where the time goes", cellCount: 5)

    static let started = NotebookSummary(path: "notebooks/getting-started.md", title: "Getting started", cellCount: 2)

    /// The app on the Notebooks tab with `notebooks` listed.
    func listed(_ notebooks: [NotebookSummary], width: Int = 120, height: Int = 36) -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), notebooks))
        return state
    }

    /// `started` open on `text`, at its top.
    func opened(_ text: String) -> AppState {
        var state = listed([Self.started])
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            AppFixtures.answer(NotebooksPanel.OpenNotebook(path: Self.started.path), Notebook.parse(text)))
        return state
    }

    /// The row of the screen that holds the list's bottom edge.
    func listBottom(_ state: AppState) -> String {
        state.render().text().split(separator: "\n").map(String.init).last { $0.hasPrefix("╰") } ?? ""
    }

    @Test func aNotebookOpenAt160x48() {
        var state = AppFixtures.state(width: 160, height: 48)
        AppFixtures.press([.character("6")], on: &state)
        _ = state.update(AppFixtures.answer(NotebooksPanel.ListNotebooks(), AppFixtures.notebooks))
        AppFixtures.press([.enter], on: &state)
        _ = state.update(
            AppFixtures.answer(
                NotebooksPanel.OpenNotebook(path: "notebooks/getting-started.md"),
                (Notebook.parse(AppFixtures.notebookText))))
        expectPanel(state, matchesGolden: "notebooks-open-160x48")
    }

    @Test func theListAt80x24() {
        expectPanel(listed(AppFixtures.notebooks, width: 80, height: 24), matchesGolden: "notebooks-list-80x24")
    }

    /// No notebooks found (a binary copied out of its checkout): the list says so in its width
    /// and the right side says where Loupe looked and how to point it at a folder.
    @Test func noNotebooksSaysWhereItLookedAndHowToPointIt() {
        for (width, height) in [(120, 36), (80, 24)] {
            let text = listed([], width: width, height: height).render().text()
            #expect(text.contains("No notebooks found."), "\(text)")
            #expect(text.contains("$LOUPE_NOTEBOOKS, ./notebooks"), "\(text)")
            #expect(text.contains("loupe --notebooks DIR"), "\(text)")
            #expect(text.contains("LOUPE_NOTEBOOKS=DIR loupe"), "\(text)")
        }
        // With the folders the port searched: each named, and `--notebooks` to point it.
        var state = listed([])
        _ = state.update(
            AppFixtures.answer(
                NotebooksPanel.NotebookFolders(), ["/tmp/x/notebooks", "/usr/local/share/loupe/notebooks"]))
        let text = state.render().text()
        #expect(text.contains("/tmp/x/notebooks/") && text.contains("/usr/local/share/loupe/notebooks/"), "\(text)")
        #expect(text.contains("loupe --notebooks DIR"), "\(text)")
    }

    /// A name is listed once, from the first folder that holds it: the list's edge says which
    /// file the selected entry is (the walkthrough could not tell two copies apart).
    @Test func theSelectedEntrysPathIsOnTheListsEdge() {
        var state = listed([Self.started, Self.fromCheckout])
        #expect(listBottom(state).hasPrefix("╰─ notebooks/getting-started.md ─"), "\(listBottom(state))")
        AppFixtures.press([.character("j")], on: &state)
        // Too long for the list whole: its folder, which is what tells it from another copy.
        #expect(listBottom(state).hasPrefix("╰─ /src/loupe/notebooks/ ─"), "\(listBottom(state))")
        AppFixtures.press([.enter], on: &state)
        #expect(state.render().text().contains("╭ /src/loupe/notebooks/roofline.md ─"))
    }

    /// The selected notebook is shown beside the list as the cursor moves (lazygit's way), so a
    /// cut title is read in full without opening it; one holding this session's runs stays put.
    @Test func theCursorPreviewsTheSelectedNotebook() {
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("6")], on: &state)
        let listing = state.update(
            AppFixtures.answer(NotebooksPanel.ListNotebooks(), [Self.started, Self.fromCheckout]))
        #expect(listing.contains(.ask(NotebooksPanel.OpenNotebook(path: Self.started.path))), "\(listing)")
        _ = state.update(
            AppFixtures.answer(
                NotebooksPanel.OpenNotebook(path: Self.started.path), Notebook.parse(AppFixtures.notebookText)))
        #expect(state.render().text().contains("╭ notebooks/getting-started.md ─"))
        #expect(!state.render().text().contains("Select a notebook"))
        let moved = AppFixtures.press([.character("j")], on: &state)
        #expect(moved.contains(.ask(NotebooksPanel.OpenNotebook(path: Self.fromCheckout.path))), "\(moved)")
        #expect(state.render().text().contains("╭ /src/loupe/notebooks/roofline.md ─"))

        // A run's outputs are kept: moving off that notebook asks for no other.
        var running = opened(AppFixtures.notebookText)
        _ = AppFixtures.press([.character("r")], on: &running)
        _ = AppFixtures.press([.escape], on: &running)
        let away = AppFixtures.press([.character("j")], on: &running)
        #expect(!away.contains { $0.request(as: NotebooksPanel.OpenNotebook.self) != nil }, "\(away)")
        #expect(running.render().text().contains("╭ notebooks/getting-started.md ─"))
    }

    @Test func atEightyColumnsTheFolderIsCutAtItsFront() {
        var state = listed([Self.started, Self.fromCheckout], width: 80, height: 24)
        #expect(listBottom(state).hasPrefix("╰─ notebooks/ ─"), "\(listBottom(state))")
        AppFixtures.press([.character("j")], on: &state)
        #expect(listBottom(state).hasPrefix("╰─ …/loupe/notebooks/ ─"), "\(listBottom(state))")
    }

    /// r runs every cell: each says ✓ or ✗ and its time, and the status line sums the run up
    /// when its last command ends, naming the cells that failed.
    @Test func aRunMarksEachCellAndEndsWithASummary() {
        var state = opened(AppFixtures.notebookText)
        let scratch = CommandPlace(target: .scratch("getting-started.md"), directory: "notebooks")
        _ = state.update(.tick(10))
        #expect(
            AppFixtures.press([.character("r")], on: &state) == [.runCommandIn(JobID(1), "workspace init", scratch)])
        _ = state.update(.tick(10.4))
        let next = state.update(.jobFinished(JobID(1), CommandOutcome(output: "created workspace scratch.sqlite\n")))
        // The next cell's command starts (the panels also reload what the command may have changed).
        #expect(next.first == .runCommandIn(JobID(2), "workspace check", scratch))
        // Half-way, the cell that ran is marked and the run is not summed up yet.
        #expect(state.render().text().contains("✓ ran in 0.40 s"))
        #expect(state.message?.text.hasPrefix("ran ") != true)
        _ = state.update(.tick(11.1))
        _ = state.update(.jobFinished(JobID(2), CommandOutcome(error: "the workspace is damaged")))
        let text = state.render().text()
        #expect(text.contains("✓ ran in 0.40 s"))
        #expect(text.contains("✗ failed in 0.70 s"))
        #expect(state.message?.text == "ran 2 cells: ✓ 1 · ✗ 1 (cell 2) · 1.1 s")
        #expect(state.message?.level == .error)
    }

    /// A command written `!line` fails on purpose: its cell is ✓, and enter's one-cell run says so.
    @Test func anExpectedErrorIsNotAFailure() {
        var state = opened(
            """
            # Errors

            ```loupe
            !workspace info missing.sqlite
            ```
            """)
        _ = state.update(.tick(3))
        AppFixtures.press([.character("j")], on: &state)
        #expect(AppFixtures.press([.enter], on: &state).count == 1)
        _ = state.update(.tick(3.5))
        _ = state.update(.jobFinished(JobID(1), CommandOutcome(error: "no workspace at missing.sqlite")))
        let text = state.render().text()
        #expect(text.contains("✓ ran in 0.50 s"))
        #expect(text.contains("expected error: no workspace at missing.sqlite"))
        #expect(state.message?.text == "ran 1 cell: ✓ 1 · 0.5 s")
        #expect(state.message?.level == .ok)
    }
}
