import LoupeKit
import LoupeTUI

/// Everything that can change the app: input, time, job reports and loaded data.
package enum Msg: Hashable, Sendable {
    case input(InputEvent)
    /// Monotonic seconds; sent while jobs run so progress and ETAs move.
    case tick(Double)
    case jobProgress(JobID, JobProgress)
    case jobFinished(JobID, CommandOutcome)
    /// SIGTERM, SIGINT or SIGHUP arrived: leave cleanly.
    case terminate(Int32)
    case notebooksListed([NotebookSummary])
    case notebookOpened(path: String, result: NotebookLoad)
    case attentionAnalyzed(AttentionRequest, AttentionLoad)
    case fileWritten(path: String, error: String?)
    case rooflineLoaded(RooflineModel)
}

/// What the Attention panel asks MiniLM to read: a sentence, or a pair.
package struct AttentionRequest: Hashable, Sendable {
    package var first: String
    package var second: String?

    package init(_ first: String, second: String? = nil) {
        self.first = first
        self.second = second
    }
}

/// An attention analysis, or why it could not be made.
package enum AttentionLoad: Hashable, Sendable {
    case analyzed(AttentionAnalysis)
    case failed(String)
}

/// A notebook found on disk.
package struct NotebookSummary: Hashable, Sendable {
    package var path: String
    package var title: String
    package var cellCount: Int

    package init(path: String, title: String, cellCount: Int) {
        self.path = path
        self.title = title
        self.cellCount = cellCount
    }
}

/// A notebook read from disk, or why it could not be.
package enum NotebookLoad: Hashable, Sendable {
    case loaded(Notebook)
    case failed(String)
}
