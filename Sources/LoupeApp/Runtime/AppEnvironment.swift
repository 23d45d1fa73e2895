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
    /// The SAE panel's SAEs, features, cards and test texts; nil where there is no workspace.
    package var sae: SAEBrowser?
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

    /// The Retrieval panel's search on `retrieval`: each query answered, judged and recorded.
    package static func search(_ retrieval: RetrievalService) -> @Sendable (RetrievalRequest) throws -> RetrievalResult
    {
        { request in
            let found = try retrieval.panelSearch(request.query, options: request.options)
            return RetrievalResult(
                hits: found.hits, bm25Top: found.bm25Top, denseTop: found.denseTop, judged: found.judged,
                record: found.record)
        }
    }

    /// Files in `directories` whose names end in one of `suffixes`, sorted within each directory,
    /// each file once however many of the directories reach it.
    package static func files(in directories: [String], suffixes: [String]) -> [String] {
        var seen = Set<String>()
        var found: [String] = []
        for directory in directories {
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
            for file in files where suffixes.contains(where: file.hasSuffix) {
                let path = directory + "/" + file
                let canonical = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
                if seen.insert(canonical).inserted { found.append(path) }
            }
        }
        return found
    }

    /// Notebooks in `directories` (Markdown files with at least one `loupe` cell), by path.
    package static func findNotebooks(in directories: [String]) -> [NotebookSummary] {
        files(in: directories, suffixes: [".md"]).compactMap { path in
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
            let notebook = Notebook.parse(text)
            guard !notebook.cells.isEmpty else { return nil }
            let heading = text.split(separator: "\n").first { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
            return NotebookSummary(
                path: path, title: heading ?? (path as NSString).lastPathComponent, cellCount: notebook.cells.count)
        }
    }

    /// Eval suite files (`*.yaml`, `*.yml`) in `directories`, relative to the current directory
    /// where they are under it.
    package static func findSuites(in directories: [String]) -> [String] {
        let here = FileManager.default.currentDirectoryPath + "/"
        return files(in: directories, suffixes: [".yaml", ".yml"]).map { file in
            let path = URL(fileURLWithPath: file).standardizedFileURL.path
            return path.hasPrefix(here) ? String(path.dropFirst(here.count)) : path
        }
    }
}
