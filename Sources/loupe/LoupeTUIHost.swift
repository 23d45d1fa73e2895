import Foundation
import LoupeApp
import LoupeCommands
import LoupeKit
import LoupeReceiver
import LoupeStore
import LoupeTUI
import LoupeTerminal

/// The TUI as the command language sees it: opening it and its key reference (the benchmarks
/// that drive the panels are LoupeBench's own).
/// Everything that needs both the commands and the screen is assembled here.
struct LoupeTUIHost: TUIHost {
    /// Opens the TUI: workspace first (its errors print before the terminal is taken), then the
    /// theme, then the terminal; the terminal is restored on every way out.
    func openTUI(
        session: WorkspaceSession, theme: String?, jobs: [String], environment: [String: String],
        firstFrameSize: Size?, listen: Bool
    ) throws {
        // A PostgreSQL workspace (a URL) opens its panels on the tables that are on the seam.
        let postgres = try session.postgresDatabase()
        let workspace = postgres == nil ? try session.workspace() : nil
        let settings = SettingsTables(postgres ?? workspace!)
        // What could not be read or started: the TUI opens anyway and the status bar says it.
        var warnings: [String] = []
        var themeName = theme ?? "default"
        if theme == nil {
            do { themeName = try settings.setting(ThemeLoader.settingKey) ?? themeName } catch {
                warnings.append("the kept theme could not be read (\(error)); using \(themeName)")
            }
        }
        let loaded: Theme
        do {
            loaded = try session.themes.load(themeName)
        } catch {
            loaded = .builtInDefault
            warnings.append("theme \(error); using the built-in default")
        }
        // `--listen`: the session's receiver on OTLP's ports (`:listen` starts it later, `:listen
        // --stop` ends it); stopped, its queue committed, when the TUI closes.
        if listen {
            do { _ = try session.listen(ReceiverConfiguration(environment: environment)) } catch {
                warnings.append("\(error)")
            }
        }
        defer { session.stopListening() }
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let backend: any TerminalBackend
        if let firstFrameSize {
            backend = HeadlessBackend(size: firstFrameSize)
        } else {
            backend = try NCursesBackend(environment: environment)
        }
        TerminationSignals.install()
        defer { backend.shutdown() }
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        var history: [String] = []
        do { history = try settings.history(source: .tui) } catch {
            warnings.append("the command history could not be read (\(error)); ↑ starts empty")
        }
        var state = AppState(
            size: backend.size, theme: loaded, forceMonochrome: noColor, panels: AppState.standardPanels(),
            workspaceName: postgres == nil
                ? URL(fileURLWithPath: session.displayPath).lastPathComponent : session.displayPath,
            catalog: executor.catalog, themeNames: session.themes.availableThemes(),
            history: history
        )
        if !warnings.isEmpty { state.message = StatusMessage(text: warnings.joined(separator: " · "), level: .error) }
        // No watcher means no live updates: the status bar says so, rather than a view that
        // silently stops following what `loupe serve` receives.
        let watching = Result { () throws(WorkspaceError) in try session.watcher() }
        let ports: Ports
        if let workspace {
            ports = PanelPorts.make(workspace: workspace, session: session, environment: environment)
        } else {
            ports = PanelPorts.make(postgres: postgres!, session: session, environment: environment)
        }
        let recordHistory: @Sendable (String) throws -> Void = { line in
            try settings.recordHistory(line, source: .tui)
        }
        var changed: (@Sendable () -> Bool)?
        var unreachable: (@Sendable () -> String?)?
        switch watching {
        case .success(let watcher):
            changed = { watcher.changed() }
            unreachable = { watcher.trouble }
        case .failure(let error):
            unreachable = { "no live updates: \(error)" }
        }
        let appEnvironment = AppEnvironment(
            commands: executor, ports: ports, recordHistory: recordHistory, workspaceChanged: changed,
            listener: { session.listenerStatus }, unreachable: unreachable
        )
        let runtime = AppRuntime(state: state, backend: backend, environment: appEnvironment)
        for line in jobs { runtime.start(line) }
        if firstFrameSize != nil {
            runtime.onFirstFrame = {
                FileHandle.standardOutput.write(Data("first-frame\n".utf8))
            }
            runtime.step(timeoutMilliseconds: 0)
            return
        }
        runtime.run()
        // Notebooks' scratch workspaces last as long as the TUI.
        defer { try? FileManager.default.removeItem(atPath: executor.scratchRoot) }
        if !runtime.finish() {
            try? FileManager.default.removeItem(atPath: executor.scratchRoot)
            // Work that would not stop is abandoned: everything it committed is in the workspace
            // (each write is a transaction) and the rest is rolled back when the file is next opened.
            backend.shutdown()
            fflush(nil)
            _exit(TerminationSignals.lastReceived.map { 128 + $0 } ?? 0)
        }
        if let signal = TerminationSignals.lastReceived {
            // Restore the terminal before the caller prints and exits with 128 + the signal.
            backend.shutdown()
            throw CommandExit(code: 128 + signal, "")
        }
    }

    func keybindingsMarkdown() -> String { KeybindingsDocument.markdown() }
}
