import LoupeStore

/// The Roofline panel's port: the machine profiles with their roofs and measured kernels.
///
/// Thread-safety: any thread.
package struct RooflineBrowser: Sendable {
    private let tables: RooflineTables

    package init(workspace: Workspace) { tables = workspace.roofline }

    /// The port on the roofline's tables of either backend (PostgreSQL's, for a team).
    package init(tables: RooflineTables) { self.tables = tables }

    /// Every profile in the workspace (the measured CPU, imported GPUs) with its kernels placed.
    package func model() throws -> RooflineModel { try RooflineModel.load(from: tables) }

    /// Only the runs `focus` names (a trace step's forward pass), placed under their roofs.
    package func model(focus: RooflineFocus) throws -> RooflineModel {
        try RooflineModel.load(from: tables, including: focus.runIDs).keeping(runs: Set(focus.runIDs))
    }
}
