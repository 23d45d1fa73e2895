import Foundation
import LoupeApp
import LoupeCommands
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTerminal
import Testing

/// The real loop on a headless backend, running real commands on a real workspace.
@Suite struct AppRuntimeTests {
    private func makeRuntime(script: [InputEvent], size: Size = Size(width: 100, height: 30)) throws -> (
        AppRuntime, HeadlessBackend, WorkspaceSession
    ) {
        let session = TestEnvironment.session()
        let executor = CommandExecutor(session: session, isInsideTUI: true, scratchRoot: Self.scratchRoot(session))
        let backend = HeadlessBackend(size: size, script: script)
        let state = AppState(
            size: size, theme: .builtInDefault, panels: AppState.standardPanels(), workspaceName: "w.sqlite",
            catalog: executor.catalog, themeNames: session.themes.availableThemes()
        )
        let environment = try TestEnvironment.appEnvironment(
            session: session, executor: executor,
            notebooks: [TestEnvironment.repositoryRoot.appendingPathComponent("notebooks").path])
        return (AppRuntime(state: state, backend: backend, environment: environment), backend, session)
    }

    private func keys(_ text: String) -> [InputEvent] { text.map { .key(.character($0)) } }

    /// Notebooks' scratch workspaces go beside the test's workspace, not in the process's folder.
    static func scratchRoot(_ session: WorkspaceSession) -> String {
        URL(fileURLWithPath: session.path).deletingLastPathComponent().appendingPathComponent("scratch").path
    }

    /// Steps the loop until `done` or a minute passes: jobs finish on other threads, and a loaded
    /// 2-core machine (CI building while tests run) can take seconds where an idle one takes ms.
    static func pump(_ runtime: AppRuntime, until done: () -> Bool) {
        let deadline = Date().addingTimeInterval(60)
        while !done(), Date() < deadline { runtime.step(timeoutMilliseconds: 5) }
    }

    private func drive(_ runtime: AppRuntime, _ backend: HeadlessBackend) {
        while !backend.isScriptExhausted, !runtime.isFinished { runtime.step(timeoutMilliseconds: 0) }
        runtime.waitForJobs()
        runtime.step(timeoutMilliseconds: 0)
    }

    @Test func aCommandGivenAtStartRunsAsAJob() throws {
        let (runtime, backend, _) = try makeRuntime(script: [])
        runtime.start("workspace info")
        #expect(runtime.state.jobs.count == 1)
        AppRuntimeTests.pump(runtime) { runtime.state.jobs.isEmpty }
        runtime.step(timeoutMilliseconds: 0)
        let screen = try #require(backend.lastFrame).text()
        #expect(screen.contains("workspace info"))
        #expect(runtime.state.jobs.isEmpty)
    }

    @Test func aColonCommandRunsAndItsOutputIsShown() throws {
        let (runtime, backend, session) = try makeRuntime(
            script: [.key(.character(":"))] + keys("workspace info") + [.key(.enter)])
        drive(runtime, backend)
        let screen = try #require(backend.lastFrame).text()
        #expect(screen.contains("Output: :workspace info"))
        #expect(screen.contains("schema     v\(Workspace.migrationIdentifiers.count)"))
        // The line went into the workspace's history (written in the background).
        var history: [String] = []
        let deadline = Date().addingTimeInterval(60)
        while history.isEmpty, Date() < deadline {
            history = try session.workspace().settings.history(source: .tui)
            usleep(10_000)
        }
        #expect(history == ["workspace info"])
    }

    @Test func themeSwitchesLiveAndIsRemembered() throws {
        let (runtime, backend, session) = try makeRuntime(
            script: [.key(.character(":"))] + keys("theme high-contrast") + [.key(.enter)])
        drive(runtime, backend)
        #expect(runtime.state.theme.name == "high-contrast")
        #expect(try session.workspace().settings.setting("theme") == "high-contrast")
        #expect(backend.lastFrame?[0, 0].style.background == RGB(0, 0, 0))
    }

    @Test func notebooksAreListedAndACellRuns() throws {
        let (runtime, backend, session) = try makeRuntime(
            script: [.key(.character("6"))], size: Size(width: 120, height: 40))
        drive(runtime, backend)
        Self.pump(runtime) { backend.lastFrame?.text().contains("Getting started") ?? false }
        #expect(backend.lastFrame?.text().contains("Getting started") == true)
        backend.enqueue([.key(.character("/"))] + keys("getting") + [.key(.enter), .key(.enter)])
        drive(runtime, backend)
        // Open: the notebook is parsed (the list's preview shows the cell too, so wait for the
        // document itself) and its first cell's source is on screen.
        func opened() -> Bool {
            let panel = runtime.state.panels.first { $0.id == .notebooks } as? NotebooksPanel
            return panel?.document?.notebook != nil && (backend.lastFrame?.text().contains("workspace init") ?? false)
        }
        Self.pump(runtime, until: opened)
        // The notebook opens at its title; enter goes to the first cell, enter again runs it.
        #expect(backend.lastFrame?.text().contains("Getting started") == true)
        backend.enqueue([.key(.enter), .key(.enter)])
        drive(runtime, backend)
        // The cell runs as a job, on the notebook's scratch workspace: wait for its output.
        func ran() -> Bool {
            backend.lastFrame?.text().contains("created workspace scratch getting-started.md") ?? false
        }
        Self.pump(runtime, until: ran)
        let screen = try #require(backend.lastFrame).text()
        #expect(ran(), "\(screen)")
        #expect(
            FileManager.default.fileExists(atPath: Self.scratchRoot(session) + "/getting-started-md.sqlite"))
        // The run says how it ended: ✓ under the cell with its time, and a summary on the status line.
        Self.pump(runtime) { backend.lastFrame?.text().contains("✓ ran in") ?? false }
        #expect(backend.lastFrame?.text().contains("✓ ran in") == true)
        #expect(
            runtime.state.message?.text.hasPrefix("ran 1 cell: ✓ 1 · ") == true,
            "\(String(describing: runtime.state.message))")
    }

    /// A message set by a key after the app sat idle is timed from that key, not from the last
    /// tick (minutes earlier), so it is on screen; it goes once its lifetime has passed.
    @Test func aMessageAfterAnIdleSpellIsShownForItsLifetime() throws {
        let clock = Clock()
        let session = TestEnvironment.session()
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let backend = HeadlessBackend(size: Size(width: 100, height: 30), script: [])
        let state = AppState(
            size: backend.size, theme: .builtInDefault, panels: AppState.standardPanels(), workspaceName: "w.sqlite",
            catalog: executor.catalog, themeNames: [])
        var environment = try TestEnvironment.appEnvironment(session: session, executor: executor)
        environment.now = { clock.now }
        let runtime = AppRuntime(state: state, backend: backend, environment: environment)
        Self.pump(runtime) { !runtime.state.jobs.isEmpty || runtime.state.panels[0].isLoadingFirstView == false }
        clock.now = 600
        runtime.step(timeoutMilliseconds: 0)
        // Roofline has nothing to search: "/" says so, and the message stays.
        backend.enqueue([.key(.character("4")), .key(.character("/"))])
        runtime.step(timeoutMilliseconds: 0)
        runtime.step(timeoutMilliseconds: 0)
        #expect(runtime.state.message?.text.hasPrefix("Nothing to search") == true)
        clock.now = 605
        runtime.step(timeoutMilliseconds: 0)
        #expect(runtime.state.message != nil)
        clock.now = 609
        runtime.step(timeoutMilliseconds: 0)
        #expect(runtime.state.message == nil)
    }

    private final class Clock: @unchecked Sendable {
        var now: Double = 100
    }

    @Test func quitStopsTheLoop() throws {
        let (runtime, backend, _) = try makeRuntime(script: [.key(.character("q"))])
        drive(runtime, backend)
        #expect(runtime.isFinished)
    }
}

/// The Attention panel on the real MiniLM, through the real loop.
@Suite(
    .enabled(
        if: ModelLibrary.standard(environment: ProcessInfo.processInfo.environment).hasMiniLM,
        "MiniLM weights not found: run scripts/fetch-minilm"))
struct AttentionRuntimeTests {
    @Test func typingASentenceShowsEveryHeadAndThePreviousTokenHead() throws {
        let session = TestEnvironment.session()
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let script: [InputEvent] =
            [.key(.character("3")), .key(.character("i")), .key(.control("u"))]
            + "The cat sat.".map { .key(.character($0)) } + [.key(.enter)]
        let backend = HeadlessBackend(size: Size(width: 160, height: 48), script: script)
        let state = AppState(
            size: backend.size, theme: .builtInDefault, panels: AppState.standardPanels(), workspaceName: "w.sqlite",
            catalog: executor.catalog, themeNames: ["default"]
        )
        let environment = try TestEnvironment.appEnvironment(session: session, executor: executor)
        let runtime = AppRuntime(state: state, backend: backend, environment: environment)
        AppRuntimeTests.pump(runtime) { backend.lastFrame?.text().contains("6 tokens · Model grid") ?? false }
        let screen = try #require(backend.lastFrame).text()
        #expect(screen.contains("6 tokens · Model grid"))
        #expect(screen.contains("H11") && screen.contains("L5"))
        let panel = try #require(runtime.state.panels.first { $0.id == .attention } as? AttentionPanel)
        let analysis = try #require(panel.analysis)
        #expect(analysis.tokens == ["[CLS]", "the", "cat", "sat", ".", "[SEP]"])
        let previousTokenHead = try #require(analysis.statistics.first { $0.layer == 0 && $0.head == 2 })
        #expect(previousTokenHead.previousToken > 0.9)
        #expect(analysis.lens.last.map { abs($0 - 1) < 1e-5 } == true)
    }
}

/// `F` in the Traces panel: the step's text goes to `$EDITOR` (here a script that writes
/// another tool result), and what it saved is the fork's new result.
@Suite(.serialized) struct ForkInEditorRuntimeTests {
    @Test func theEditorsSavedTextIsTheForksNewToolResult() throws {
        let session = TestEnvironment.session()
        let directory = URL(fileURLWithPath: session.path).deletingLastPathComponent().path
        try AgentCommandTests.corpus.write(toFile: directory + "/corpus.jsonl", atomically: true, encoding: .utf8)
        _ = try TestEnvironment.run(["--workspace", session.path, "ingest", directory + "/corpus.jsonl", "--no-embed"])
        let asked = try TestEnvironment.run([
            "--workspace", session.path, "agent", "what similarity must aeroelastic models of heated aircraft keep?",
        ])
        #expect(asked.status == 0, "\(asked.error)")
        // The "editor": keeps what it was given in a file the test reads, writes the new result.
        let editor = directory + "/editor.sh"
        try """
        #!/bin/sh
        cp "$1" "\(directory)/given.txt"
        printf 'chunk 3 · document a3 · Shells\\nBuckling of thin cylindrical shells under axial compression.\\n' > "$1"

        """.write(toFile: editor, atomically: true, encoding: .utf8)
        chmod(editor, 0o755)

        let size = Size(width: 120, height: 36)
        let executor = CommandExecutor(
            session: session, isInsideTUI: true, scratchRoot: AppRuntimeTests.scratchRoot(session))
        let backend = HeadlessBackend(size: size, script: [.key(.character("1")), .key(.enter)])
        var environment = try TestEnvironment.appEnvironment(session: session, executor: executor)
        environment.editor = editor
        let state = AppState(
            size: size, theme: .builtInDefault, panels: AppState.standardPanels(), workspaceName: "w.sqlite",
            catalog: executor.catalog, themeNames: session.themes.availableThemes())
        let runtime = AppRuntime(state: state, backend: backend, environment: environment)
        func traces() -> TracesPanel? { runtime.state.panels.lazy.compactMap { $0 as? TracesPanel }.first }
        AppRuntimeTests.pump(runtime) { traces()?.rows.isEmpty == false && backend.isScriptExhausted }
        backend.enqueue([.key(.enter)])
        AppRuntimeTests.pump(runtime) { traces()?.detail != nil }
        // Walk to span 4, the read tool.
        for _ in 0..<8 where traces()?.currentOrdinal != 4 {
            backend.enqueue([.key(.right)])
            AppRuntimeTests.pump(runtime) { backend.isScriptExhausted && traces()?.detail != nil }
        }
        #expect(traces()?.currentOrdinal == 4)
        backend.enqueue([.key(.character("F"))])
        AppRuntimeTests.pump(runtime) {
            backend.isScriptExhausted && runtime.state.jobs.isEmpty && traces()?.diff != nil
        }
        #expect(backend.externalRuns.count == 1)
        #expect(backend.externalRuns.first?.prefix(3) == ["/bin/sh", "-c", editor + " \"$1\""])
        // The editor was given the read's result, and the fork went on from the new one.
        let given = try String(contentsOfFile: directory + "/given.txt", encoding: .utf8)
        #expect(given.hasPrefix("chunk ") && !given.contains("Buckling"))
        let workspace = try session.workspace()
        let fork = try #require(try workspace.traces.traceSummary(id: 2))
        #expect(fork.parentTraceID == 1 && fork.forkOrdinal == 4)
        #expect(
            try TestEnvironment.run(["--workspace", session.path, "trace", "export", "2"]).output.contains("Buckling"))
        // The temporary file is gone.
        let left = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter {
            $0.hasPrefix("loupe-trace-fork-\(getpid())-")
        }
        #expect(left.isEmpty)
    }
}
