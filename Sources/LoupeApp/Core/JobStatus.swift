import LoupeKit
import LoupeTUI

/// A command run in the background, as the status bar shows it.
package struct JobStatus: Hashable, Sendable {
    /// Who asked for the job, so its result goes back there.
    package enum Origin: Hashable, Sendable {
        case commandLine
        case panel(PanelID, tag: Int)
        /// A panel's long read (an SAE's feature index), not a command.
        case read
    }

    package var id: JobID
    package var title: String
    package var startedAt: Double
    package var progress: JobProgress?
    package var origin: Origin
    /// Where it runs, when not on the open workspace as typed.
    package var place: CommandPlace = .open
}
