import Foundation

extension Workspace {
    /// Stores the sweeps of one benchmark run (Loupe's and its peers'), all or none.
    package func record(_ sweeps: [ANNSweepRecord]) throws(WorkspaceError) { try roofline.record(sweeps) }

    package func latestANNSweeps() throws(WorkspaceError) -> [ANNSweepRecord] { try roofline.latestANNSweeps() }
}
