import Foundation
import LoupeKit
import LoupeStore

/// What the runtime needs from outside the TUI: a way to run commands, the workspace for
/// history, where notebooks live, and a clock.
package struct AppEnvironment: Sendable {
    package var commands: any CommandService
    package var workspace: Workspace?
    package var notebookDirectories: [String]
    /// Where the Evals panel looks for suite files (`*.yaml`) that `r` can run.
    package var evalSuiteDirectories: [String] = []
    /// Runs MiniLM for the Attention panel; nil where no model is available.
    package var analyzeAttention: (@Sendable (AttentionRequest) throws -> AttentionAnalysis)?
    /// Answers the Retrieval panel's queries; nil where there is no workspace.
    package var search: (@Sendable (RetrievalRequest) throws -> RetrievalResult)?
    /// Monotonic seconds.
    package var now: @Sendable () -> Double

    package init(
        commands: any CommandService, workspace: Workspace?, notebookDirectories: [String],
        analyzeAttention: (@Sendable (AttentionRequest) throws -> AttentionAnalysis)? = nil,
        now: @escaping @Sendable () -> Double = AppEnvironment.monotonicSeconds
    ) {
        self.analyzeAttention = analyzeAttention
        self.commands = commands
        self.workspace = workspace
        self.notebookDirectories = notebookDirectories
        self.now = now
    }

    /// Seconds from a monotonic clock.
    package static let monotonicSeconds: @Sendable () -> Double = {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    /// Notebooks in `directories` (Markdown files with at least one `loupe` cell), by path.
    package static func findNotebooks(in directories: [String]) -> [NotebookSummary] {
        var seen = Set<String>()
        var found: [NotebookSummary] = []
        for directory in directories {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            for file in files where file.hasSuffix(".md") {
                let path = directory + "/" + file
                let canonical = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
                guard seen.insert(canonical).inserted, let text = try? String(contentsOfFile: path, encoding: .utf8)
                else { continue }
                let notebook = Notebook.parse(text)
                guard !notebook.cells.isEmpty else { continue }
                let heading = text.split(separator: "\n").first { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
                found.append(NotebookSummary(path: path, title: heading ?? file, cellCount: notebook.cells.count))
            }
        }
        return found
    }
}
