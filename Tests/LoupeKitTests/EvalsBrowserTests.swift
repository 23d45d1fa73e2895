import Foundation
import LoupeEvals
import LoupeKit
import LoupeStore
import Testing

/// The Evals panel's port on the sample Inspect AI log (three questions × two epochs, scored by
/// `match()`, one wrong answer in epoch 2), imported into a real workspace.
@Suite struct EvalsBrowserTests {
    static let log = KitFixtures.path("sample-data/traces/inspect-arith.eval")

    static func imported() throws -> (Workspace, EvalsBrowser) {
        let workspace = try KitFixtures.workspace("evals")
        _ = try TraceService(workspace: workspace).importFiles([log])
        return (workspace, EvalsBrowser(workspace: workspace, suiteDirectories: []))
    }

    static func evalRunRows(_ workspace: Workspace) throws -> Int {
        try workspace.info().tables.first { $0.name == "eval_runs" }?.rows ?? -1
    }

    @Test func anImportedInspectLogIsARunAndListingItWritesNothing() throws {
        let (workspace, browser) = try Self.imported()
        #expect(try Self.evalRunRows(workspace) == 1)
        let first = try browser.overview()
        let second = try browser.overview()
        #expect(first == second)
        #expect(try Self.evalRunRows(workspace) == 1)

        let run = try #require(first.runs.first)
        #expect(first.runs.count == 1)
        #expect(run.run.suite == "inspect:arith" && run.run.source == "inspect" && run.run.status == "complete")
        #expect(run.scorers == ["match"] && run.answered == 6 && run.run.epochs == 2)
        #expect(run.headline?.scorer == "match")
    }

    /// An imported log's run keeps the model its samples called (with the task, what makes logs
    /// comparable), and a label set on it comes back with its listing.
    @Test func anImportedRunKeepsItsModelAndItsLabel() throws {
        let (workspace, browser) = try Self.imported()
        let run = try #require(try browser.overview().runs.first)
        #expect(run.run.targetJSON.contains(#""model":"mockllm/model""#), "\(run.run.targetJSON)")
        #expect(run.label == nil)
        let service = EvalService(workspace: workspace)
        try service.setLabel("  baseline  ", run: run.id)
        #expect(try browser.overview().runs.first?.label == "baseline")
        try service.setLabel("", run: run.id)
        #expect(try browser.overview().runs.first?.label == nil)
        #expect(throws: EvalError.self) { try service.setLabel("x", run: 42) }
    }

    @Test func aWorkspaceWithoutInspectLogsHasNoRuns() throws {
        let workspace = try KitFixtures.workspace("evals")
        _ = try TraceService(workspace: workspace).importFiles([KitFixtures.path("sample-data/traces/otlp-genai.jsonl")]
        )
        let browser = EvalsBrowser(workspace: workspace, suiteDirectories: [])
        #expect(try browser.overview().runs.isEmpty)
        #expect(try Self.evalRunRows(workspace) == 0)
    }

    @Test func aRunsDetailHasEveryAnswerWithItsScoreAndTrace() throws {
        let (_, browser) = try Self.imported()
        let id = try #require(try browser.overview().runs.first?.id)
        let detail = try browser.run(id)
        #expect(detail.rows.count == 6)
        #expect(Set(detail.rows.map(\.result.itemID)) == ["q1", "q2", "q3"])
        #expect(Set(detail.rows.map(\.result.epoch)) == [1, 2])
        #expect(detail.rows.allSatisfy { $0.result.traceID != nil && $0.score("match") != nil })
        #expect(detail.rows.allSatisfy { !($0.result.output ?? "").isEmpty && !$0.targets.isEmpty })
        // Epoch 2 answers one question wrong.
        #expect(detail.rows.filter { $0.score("match")?.passed == false }.count == 1)
        #expect(throws: (any Error).self) { try browser.run(id + 1) }
    }

    @Test func aRunComparedWithItselfHasNoDeltas() throws {
        let (_, browser) = try Self.imported()
        let id = try #require(try browser.overview().runs.first?.id)
        let comparison = try browser.compare(baseline: id, run: id)
        #expect(comparison.itemDeltas().isEmpty)
        #expect(comparison.warnings.isEmpty)
        let match = try #require(comparison.metrics.metrics.first)
        #expect(match.scorer == "match" && match.paired.meanA == match.paired.meanB)
        #expect(match.paired.wins == 0 && match.paired.losses == 0 && match.paired.n == 3)
        #expect(match.paired.fixed.isEmpty && match.paired.regressed.isEmpty && !match.paired.itemSetsDiffer)
    }

    @Test func suitesAreFoundOnceHoweverManyDirectoriesReachThem() throws {
        let directory = try KitFixtures.temporaryDirectory("suites")
        let samples = KitFixtures.path("sample-data/evals")
        let names = try FileManager.default.contentsOfDirectory(atPath: samples).filter { $0.hasSuffix(".yaml") }
            .sorted()
        #expect(!names.isEmpty)
        for name in names {
            try FileManager.default.copyItem(atPath: samples + "/" + name, toPath: directory + "/" + name)
        }
        try "not a suite".write(toFile: directory + "/notes.txt", atomically: true, encoding: .utf8)
        try "name: short\n".write(toFile: directory + "/short.yml", atomically: true, encoding: .utf8)
        let link = try KitFixtures.temporaryDirectory("suites-link") + "/same"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory)

        let found = EvalsBrowser.findSuites(in: [directory, directory + "/.", link, directory + "/missing"])
        #expect(found.map { ($0 as NSString).lastPathComponent } == names + ["short.yml"])
        #expect(found.allSatisfy { $0.hasPrefix(directory) })
        let browser = EvalsBrowser(workspace: try KitFixtures.workspace("evals"), suiteDirectories: [directory, link])
        #expect(try browser.overview().suites == found)
    }
}
