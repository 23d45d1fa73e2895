import Foundation
import LoupeApp
import LoupeKit
import LoupeStore
import LoupeTUI
import LoupeTerminal

/// Opens the TUI: workspace first (its errors print before the terminal is taken), then the
/// theme, then the terminal; the terminal is restored on every way out.
enum TUILauncher {
    static func run(_ options: Loupe, environment: [String: String], benchSize: Size? = nil) throws {
        let session = makeSession(option: options.global.workspace, environment: environment)
        let workspace = try session.workspace()
        var warning: String?
        let themeName = options.theme ?? ((try? workspace.setting(ThemeCommand.settingKey)) ?? nil) ?? "default"
        let theme: Theme
        do {
            theme = try session.themes.load(themeName)
        } catch {
            theme = .builtInDefault
            warning = "theme \(error); using the built-in default"
        }
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let backend: any TerminalBackend
        if let benchSize {
            backend = HeadlessBackend(size: benchSize)
        } else {
            backend = try NCursesBackend(environment: environment)
        }
        TerminationSignals.install()
        defer { backend.shutdown() }
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        var state = AppState(
            size: backend.size, theme: theme, forceMonochrome: noColor, panels: AppState.standardPanels(),
            workspaceName: URL(fileURLWithPath: session.displayPath).lastPathComponent, catalog: executor.catalog,
            themeNames: session.themes.availableThemes(),
            history: (try? workspace.history(source: .tui)) ?? []
        )
        if let warning { state.message = StatusMessage(text: warning, level: .error) }
        var appEnvironment = AppEnvironment(
            commands: executor, workspace: workspace,
            notebookDirectories: notebookDirectories(environment: environment),
            analyzeAttention: { request in
                AttentionAnalysis(text: request.first, second: request.second, embedder: try sharedModels.miniLM())
            }
        )
        appEnvironment.evalSuiteDirectories = evalSuiteDirectories(workspacePath: session.path)
        appEnvironment.search = AppEnvironment.search(RetrievalService(workspace: workspace, models: sharedModels))
        appEnvironment.sae = SAEBrowser(workspace: workspace, models: sharedModels)
        let runtime = AppRuntime(state: state, backend: backend, environment: appEnvironment)
        if benchSize != nil {
            runtime.onFirstFrame = {
                FileHandle.standardOutput.write(Data("first-frame\n".utf8))
            }
            runtime.step(timeoutMilliseconds: 0)
            return
        }
        runtime.run()
    }

    static func makeSession(option: String?, environment: [String: String]) -> WorkspaceSession {
        WorkspaceSession(
            path: WorkspaceSession.resolvePath(option: option, environment: environment),
            busyTimeout: WorkspaceSession.busyTimeout(environment: environment),
            themes: ThemeLoader.standard(environment: environment, executablePath: executablePath)
        )
    }

    static var executablePath: String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first
    }

    /// `./evals`, `evals/` beside the workspace, `./sample-data/evals` and the checkout's.
    static func evalSuiteDirectories(workspacePath: String) -> [String] {
        let here = FileManager.default.currentDirectoryPath
        var directories = [
            here + "/evals", (workspacePath as NSString).deletingLastPathComponent + "/evals",
            here + "/sample-data/evals",
        ]
        if let checkout = CheckoutDirectory.find("sample-data", executablePath: executablePath) {
            directories.append(checkout + "/evals")
        }
        return directories
    }

    /// `$LOUPE_NOTEBOOKS`, `./notebooks`, and the checkout's `notebooks/` next to the binary.
    static func notebookDirectories(environment: [String: String]) -> [String] {
        var directories: [String] = []
        if let custom = environment["LOUPE_NOTEBOOKS"], !custom.isEmpty { directories.append(custom) }
        directories.append(FileManager.default.currentDirectoryPath + "/notebooks")
        if let checkout = CheckoutDirectory.find("notebooks", executablePath: executablePath) {
            directories.append(checkout)
        }
        return directories
    }
}
