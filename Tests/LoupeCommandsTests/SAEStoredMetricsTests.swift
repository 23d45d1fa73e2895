import Foundation
import LoupeKit
import LoupeModels
import LoupeStore
import Testing

/// An SAE whose stored `metrics_json` was damaged by hand (a raw `UPDATE` on a real workspace,
/// after a real training run on MiniLM's residual stream): `sae show` prints what still reads
/// and fails naming the SAE and column, and the feature browser's list names them too, instead
/// of an SAE shown without metrics.
@Suite(.serialized) struct SAEStoredMetricsTests {
    /// A workspace with one small trained SAE (id 1) and its path.
    private func trained() throws -> (Workspace, String) {
        let directory = TestEnvironment.temporaryDirectory()
        try EvalCommandTests.corpus.write(toFile: directory + "/corpus.jsonl", atomically: true, encoding: .utf8)
        let path = directory + "/w.sqlite"
        let ingest = try TestEnvironment.run([
            "--workspace", path, "ingest", directory + "/corpus.jsonl", "--no-embed",
        ])
        #expect(ingest.status == 0, "\(ingest.error)")
        let workspace = try Workspace(path: path)
        let service = SAEService(
            workspace: workspace, models: ModelLibrary.standard(environment: ProcessInfo.processInfo.environment))
        let collected = try service.collect(layer: 3, tokens: 2_000)
        var options = SAEService.TrainOptions()
        options.width = 32
        options.k = 4
        options.batch = 16
        options.steps = 10
        let trainedSAE = try service.train(set: collected.set, layer: nil, options: options)
        #expect(trainedSAE.model == 1 && trainedSAE.metrics != nil)
        return (workspace, path)
    }

    private func damage(_ workspace: Workspace, to text: String, column: String = "metrics_json") throws {
        _ = try workspace.writeStatements { sql in
            try sql.execute("UPDATE sae_models SET \(column) = ? WHERE id = 1", [.text(text)])
        }
    }

    @Test func damagedMetricsAreNamedByShowAndTheList() throws {
        let (workspace, path) = try trained()
        let good = try TestEnvironment.run(["--workspace", path, "sae", "show", "1"])
        #expect(good.status == 0, "\(good.error)")
        #expect(good.output.contains("FVU"))
        let browser = SAEBrowser(workspace: workspace, models: ModelLibrary(root: ""))
        #expect(try browser.listings().first?.metrics != nil)

        try damage(workspace, to: #"{"tokens": 1, "l0": "#)
        let shown = try TestEnvironment.run(["--workspace", path, "sae", "show", "1"])
        #expect(shown.status != 0)
        #expect(
            shown.error.contains("unreadable metrics (SAE 1, column metrics_json): line 1, column "),
            "\(shown.error)")
        // What reads still shows, above the failure.
        #expect(shown.output.hasPrefix("SAE 1 · layer 3 · width 32 · step 10\nsettings {"), "\(shown.output)")
        let listed = #expect(throws: StoredValueError.self) { try browser.listings() }
        #expect(listed?.headline == "unreadable metrics (SAE 1, column metrics_json)")

        // JSON of another shape names the field that does not fit.
        try damage(workspace, to: #"{"tokens": 1}"#)
        let shape = #expect(throws: StoredValueError.self) { try browser.listings() }
        #expect(shape?.reason == "l0 is missing", "\(shape?.reason ?? "")")
        try damage(workspace, to: #"{"tokens": "many"}"#)
        let type = #expect(throws: StoredValueError.self) { try browser.listings() }
        #expect(type?.reason == "tokens is not of type Int", "\(type?.reason ?? "")")
    }

    /// The settings an SAE was trained with are read to list, steer and resume it.
    @Test func damagedSettingsAreNamedWhereverTheSAEIsRead() throws {
        let (workspace, _) = try trained()
        try damage(workspace, to: "{", column: "settings_json")
        let browser = SAEBrowser(workspace: workspace, models: ModelLibrary(root: ""))
        let listed = #expect(throws: StoredValueError.self) { try browser.listings() }
        #expect(listed?.headline == "unreadable settings (SAE 1, column settings_json)")
        #expect(listed?.reason.hasPrefix("line 1, column 2: ") == true, "\(listed?.reason ?? "")")
        let service = SAEService(workspace: workspace, models: ModelLibrary(root: ""))
        let stored = #expect(throws: StoredValueError.self) { try service.stored(1) }
        #expect(stored?.headline == "unreadable settings (SAE 1, column settings_json)")
        try damage(workspace, to: "{}", column: "settings_json")
        let shape = #expect(throws: StoredValueError.self) { try browser.listings() }
        #expect(shape?.reason.hasSuffix(" is missing") == true, "\(shape?.reason ?? "")")
    }
}
