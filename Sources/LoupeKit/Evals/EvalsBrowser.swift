import Foundation
import LoupeStore

/// The Evals panel's port: the runs, the suites that can be run, one run's answers, a
/// comparison. Reads only, and needs no model: running a suite goes through `eval run`.
///
/// Thread-safety: any thread.
package struct EvalsBrowser: Sendable {
    private let service: EvalService
    private let suiteDirectories: [String]

    /// A browser of `workspace`'s runs that looks for suite files (`*.yaml`, `*.yml`) in
    /// `suiteDirectories`.
    package init(workspace: Workspace, suiteDirectories: [String]) {
        service = EvalService(workspace: workspace)
        self.suiteDirectories = suiteDirectories
    }

    /// A browser of the runs in `evals` (a PostgreSQL workspace's) that looks for suite files in
    /// `suiteDirectories`.
    package init(evals: EvalTables, suiteDirectories: [String]) {
        service = EvalService(evals: evals)
        self.suiteDirectories = suiteDirectories
    }

    /// The runs, oldest first, and the suite files found.
    package func overview() throws -> EvalsOverview {
        EvalsOverview(runs: try service.list(), suites: Self.findSuites(in: suiteDirectories))
    }

    /// One run's answers and scores.
    package func run(_ id: Int64) throws -> EvalService.RunDetail { try service.detail(id) }

    /// Run `run` against `baseline`, paired on the items both answered.
    package func compare(baseline: Int64, run: Int64) throws -> EvalService.Comparison {
        try service.compare(baseline, run)
    }

    /// Eval suite files (`*.yaml`, `*.yml`) in `directories`, relative to the current directory
    /// where they are under it, each once however many of the directories reach it.
    package static func findSuites(in directories: [String]) -> [String] {
        let here = FileManager.default.currentDirectoryPath + "/"
        return DirectoryListing.files(in: directories, suffixes: [".yaml", ".yml"]).map { file in
            let path = URL(fileURLWithPath: file).standardizedFileURL.path
            return path.hasPrefix(here) ? String(path.dropFirst(here.count)) : path
        }
    }
}
