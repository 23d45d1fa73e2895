import LoupeApp
import LoupeCommands
import LoupeKit
import LoupeStore

@testable import loupe

extension TestEnvironment {
    /// The runtime's environment for `session` as the executable builds it: the same ports
    /// (``PanelPorts``), the `:` line through `executor`, history in the workspace. The eval
    /// suites are looked for beside the workspace, notebooks in `notebooks`.
    static func appEnvironment(
        session: WorkspaceSession, executor: CommandExecutor, notebooks: [String] = []
    ) throws -> AppEnvironment {
        let workspace = try session.workspace()
        var environment: [String: String] = [:]
        if let first = notebooks.first { environment["LOUPE_NOTEBOOKS"] = first }
        return AppEnvironment(
            commands: executor,
            ports: PanelPorts.make(workspace: workspace, session: session, environment: environment),
            recordHistory: { line in try workspace.settings.recordHistory(line, source: .tui) })
    }
}
