import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import Testing

/// An eval run's stored JSON columns decoded once, when its rows are read: a row damaged by hand
/// (a raw `UPDATE` on a real workspace) names its run, item and column instead of reading as an
/// item with no targets, or a run with no scorers.
@Suite struct EvalStoredValueTests {
    let workspace: Workspace
    let browser: EvalsBrowser
    let run: Int64

    init() throws {
        workspace = try KitFixtures.workspace("eval-values")
        _ = try TraceService(workspace: workspace).importFiles([EvalsBrowserTests.log])
        browser = EvalsBrowser(workspace: workspace, suiteDirectories: [])
        run = try #require(try browser.overview().runs.first?.id)
    }

    private func update(_ sql: String) throws {
        _ = try workspace.writeStatements { statements in try statements.execute(sql, [.integer(run)]) }
    }

    @Test func anItemWhoseTargetsOrMetadataDoNotParseNamesItsRowAndColumn() throws {
        let before = try browser.run(run).rows
        #expect(before.allSatisfy { $0.unreadable.isEmpty && !$0.targets.isEmpty })
        let damaged = try #require(before.first?.result)
        try update(
            "UPDATE eval_results SET targets_json = '[\"4\"', metadata_json = '{\"source\": ' WHERE run_id = ? "
                + "AND item_id = '\(damaged.itemID)' AND epoch = \(damaged.epoch)")

        let rows = try browser.run(run).rows
        let row = try #require(rows.first { $0.key == damaged.itemKey })
        let place = "run \(run), item \(damaged.itemID) epoch \(damaged.epoch)"
        #expect(
            row.unreadable.map(\.headline) == [
                "unreadable targets (\(place), column targets_json)",
                "unreadable metadata (\(place), column metadata_json)",
            ])
        #expect(row.targets.isEmpty && row.source == nil)
        // The other answers read as before.
        #expect(rows.filter { $0.key != damaged.itemKey } == before.filter { $0.key != damaged.itemKey })
    }

    @Test func aRunWhoseScorersDoNotParseIsAnErrorNamingIt() throws {
        try update("UPDATE eval_runs SET scorers_json = '[\"match\"' WHERE id = ?")
        let error = #expect(throws: StoredValueError.self) { try browser.run(run) }
        #expect(error?.headline == "unreadable scorers (run \(run), column scorers_json)")
    }

    /// `eval show --json` and export: a run's target or workspace column that does not parse is
    /// null beside an `unreadable` line naming the run, the column and where the text breaks,
    /// never a key that is silently null or missing.
    @Test func anExportedRunWhoseTargetDoesNotParseSaysSo() throws {
        let service = EvalService(workspace: workspace)
        let intact = try JSONValue.parse(try service.export(run, format: .json))
        #expect(intact["run"]?["unreadable"] == nil && intact["run"]?["target"]?.object != nil)
        try update("UPDATE eval_runs SET target_json = '{\"kind\": ', workspace_json = '[1,' WHERE id = ?")

        let exported = try JSONValue.parse(try service.export(run, format: .json))
        let record = try #require(exported["run"])
        #expect(record["target"] == .null && record["workspace"] == .null)
        let lines = record["unreadable"]?.array?.compactMap(\.string) ?? []
        #expect(lines.count == 2, "\(record)")
        #expect(lines.contains { $0.hasPrefix("run \(run), column target_json: line 1, column ") }, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("run \(run), column workspace_json: line 1, column ") }, "\(lines)")
        // The answers are still exported.
        #expect(exported["results"]?.array?.count == intact["results"]?.array?.count)
    }

    /// An answer's ranking is re-run with its run's retrieval settings; a `target_json` that does
    /// not read back names the run and column, rather than reading as a run that never was a
    /// retrieval run (the Evals panel's `o` says it instead of jumping nowhere).
    @Test func retrievalSettingsThatDoNotParseNameTheRunAndColumn() throws {
        var listing = try browser.run(run).listing
        #expect(try listing.retrievalOptions() == nil, "an Inspect run has no retriever")
        listing.run.targetJSON = #"{"kind": "retrieval", "retriever": "bm25", "stem": true, "k": 5}"#
        let options = try #require(try listing.retrievalOptions())
        #expect(options.retriever == .bm25 && options.stem && options.k == 5)
        listing.run.targetJSON = #"{"retriever": "#
        let error = #expect(throws: StoredValueError.self) { try listing.retrievalOptions() }
        #expect(error?.headline == "unreadable target (run \(run), column target_json)")
        #expect(error?.reason.hasPrefix("line 1, column ") == true, "\(String(describing: error))")
    }
}
