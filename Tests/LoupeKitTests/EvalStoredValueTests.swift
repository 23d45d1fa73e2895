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

    /// A judge's prompt and verdict are read once with the row; details that do not parse are
    /// named, and the score itself still shows.
    @Test func aScoresDetailsAreReadOnceAndNamedWhenTheyDoNotParse() throws {
        let before = try browser.run(run).rows
        let first = try #require(before.first { !$0.scores.isEmpty })
        let score = try #require(first.scores.first)
        func setDetails(_ json: String) throws {
            _ = try workspace.writeStatements { statements in
                try statements.execute(
                    "UPDATE eval_scores SET details_json = ? WHERE run_id = ? AND item_id = ? AND epoch = ? "
                        + "AND scorer = ?",
                    [
                        .text(json), .integer(run), .text(score.itemID), .integer(Int64(score.epoch)),
                        .text(score.scorer),
                    ])
            }
        }
        try setDetails(#"{"prompt": "Is 4 right?", "verdict": "PASS: it is"}"#)
        let judged = try #require(try browser.run(run).rows.first { $0.key == first.key })
        #expect(judged.judgements[score.scorer] == .init(prompt: "Is 4 right?", verdict: "PASS: it is"))
        #expect(judged.unreadable.isEmpty)

        try setDetails(#"{"verdict": "#)
        let rows = try browser.run(run).rows
        let damaged = try #require(rows.first { $0.key == first.key })
        let place = "run \(run), item \(score.itemID) epoch \(score.epoch), scorer \(score.scorer)"
        #expect(damaged.unreadable.map(\.headline) == ["unreadable details (\(place), column details_json)"])
        #expect(damaged.judgements.isEmpty && damaged.scores.map(\.value) == judged.scores.map(\.value))
        #expect(rows.filter { $0.key != first.key } == before.filter { $0.key != first.key })
    }

    /// An Inspect log's target (its model, which joins runs into a trend) and the workspace a run
    /// searched are read once with the listing; one that does not parse is named on it, and the
    /// run still lists.
    @Test func aListingsTargetOrWorkspaceThatDoesNotParseIsNamedAndTheRunStillLists() throws {
        let intact = try #require(try browser.overview().runs.first { $0.id == run })
        #expect(intact.unreadable.isEmpty && intact.run.source == "inspect")
        try update(
            "UPDATE eval_runs SET target_json = '{\"model\": ', workspace_json = '{\"corpus\": \"c\", \"chunks\": 2' "
                + "WHERE id = ?")
        let listing = try #require(try browser.overview().runs.first { $0.id == run })
        #expect(
            listing.unreadable.map(\.headline) == [
                "unreadable target (run \(run), column target_json)",
                "unreadable workspace (run \(run), column workspace_json)",
            ])
        #expect(listing.searched == nil && listing.summary == intact.summary)
        // Its series is its log's alone, as for a log kept without its model.
        #expect(listing.series != intact.series)

        try update(
            "UPDATE eval_runs SET workspace_json = '{\"corpus\": \"3f2a\", \"documents\": 3, \"chunks\": 4, "
                + "\"embedded\": 4}' WHERE id = ?")
        let searched = try #require(try browser.overview().runs.first { $0.id == run })
        #expect(searched.searched == "corpus 3f2a · 3 documents · 4 chunks (all embedded)")
    }

    /// `dataset add --from answer:…` takes the answer's targets as the item's expected output;
    /// targets that do not read back stop it with the place, rather than adding an item that
    /// expects nothing.
    @Test func aDatasetItemFromAnAnswerWhoseTargetsDoNotParseIsRefused() throws {
        let row = try #require(try browser.run(run).rows.first)
        let service = EvalService(workspace: workspace)
        let path = try KitFixtures.temporaryDirectory("kept") + "/kept.jsonl"
        let source = EvalService.DatasetSource.answer(run: run, item: row.result.itemID, epoch: row.result.epoch)
        let added = try service.addToDataset(path, from: source, expected: nil, id: "a", suite: nil, like: nil)
        #expect(added.expected == row.targets && !added.expected.isEmpty)
        try update(
            "UPDATE eval_results SET targets_json = '[\"4' WHERE run_id = ? AND item_id = '\(row.result.itemID)'")
        let error = #expect(throws: StoredValueError.self) {
            try service.addToDataset(path, from: source, expected: nil, id: "b", suite: nil, like: nil)
        }
        let place = "run \(run), item \(row.result.itemID) epoch \(row.result.epoch)"
        #expect(error?.headline == "unreadable targets (\(place), column targets_json)")
        #expect(try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").count == 1)
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
