import Foundation
import LoupeApp
import LoupeCommands
import LoupeKit
import LoupeStore

/// Where the panels' ports are made: one line per panel's port. A new panel adds its folder in
/// LoupeApp's `Panels/`, its port in LoupeKit, its entry in ``AppState/standardPanels()`` and a
/// line here.
enum PanelPorts {
    static func make(workspace: Workspace, session: WorkspaceSession, environment: [String: String]) -> Ports {
        var ports = Ports()
        ports.register(TracesBrowser(workspace: workspace))
        ports.register(TokenInsidesBrowser(workspace: workspace, models: session.models))
        ports.register(RetrievalBrowser(database: workspace, models: session.models))
        ports.register(AttentionBrowser(models: session.models))
        ports.register(RooflineBrowser(workspace: workspace))
        ports.register(EvalsBrowser(workspace: workspace, suiteDirectories: evalSuiteDirectories(session.path)))
        ports.register(NotebooksBrowser(directories: notebookDirectories(environment, workspacePath: session.path)))
        ports.register(SAEBrowser(workspace: workspace, models: session.models))
        ports.register(ReviewBrowser(workspace: workspace, environment: environment))
        ports.register(ProfilesBrowser(workspace: workspace))
        return ports
    }

    /// The ports of a PostgreSQL workspace: every panel's tables are on the seam, and Attention
    /// and Notebooks need no workspace.
    static func make(postgres: any SQLDatabase, session: WorkspaceSession, environment: [String: String]) -> Ports {
        var ports = Ports()
        ports.register(TracesBrowser(tables: TraceTables(postgres)))
        ports.register(TokenInsidesBrowser(tables: TraceTables(postgres), models: session.models))
        ports.register(RetrievalBrowser(database: postgres, models: session.models))
        ports.register(AttentionBrowser(models: session.models))
        ports.register(RooflineBrowser(tables: RooflineTables(postgres)))
        ports.register(EvalsBrowser(evals: EvalTables(postgres), suiteDirectories: evalSuiteDirectories(nil)))
        ports.register(NotebooksBrowser(directories: notebookDirectories(environment, workspacePath: nil)))
        ports.register(ReviewBrowser(database: postgres, environment: environment))
        ports.register(SAEBrowser(database: postgres, models: session.models))
        ports.register(ProfilesBrowser(database: postgres))
        return ports
    }

    /// `./evals`, `evals/` beside the workspace file, `./sample-data/evals` and the checkout's.
    static func evalSuiteDirectories(_ workspacePath: String?) -> [String] {
        let here = FileManager.default.currentDirectoryPath
        var directories = [here + "/evals", here + "/sample-data/evals"]
        if let workspacePath {
            directories.insert((workspacePath as NSString).deletingLastPathComponent + "/evals", at: 1)
        }
        if let checkout = CheckoutDirectory.find("sample-data", executablePath: CheckoutDirectory.executablePath) {
            directories.append(checkout + "/evals")
        }
        return directories
    }

    /// ``NotebooksBrowser/defaultDirectories(environment:workingDirectory:workspacePath:executablePath:)``
    /// for this process.
    static func notebookDirectories(_ environment: [String: String], workspacePath: String?) -> [String] {
        NotebooksBrowser.defaultDirectories(
            environment: environment, workingDirectory: FileManager.default.currentDirectoryPath,
            workspacePath: workspacePath, executablePath: CheckoutDirectory.executablePath)
    }
}
