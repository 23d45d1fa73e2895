import Foundation
import LoupeModels
import LoupeStore
import Synchronization

/// One stored SAE as the feature browser lists it: what it was trained as, how far it got, its
/// metrics and its training curve.
package struct SAEListing: Codable, Hashable, Sendable {
    package var id: Int64
    package var activationSet: Int64
    package var layer: Int
    package var width: Int
    package var k: Int?
    package var l1: Float
    package var step: Int
    package var steps: Int
    /// Rows of its activation set.
    package var tokens: Int
    package var metrics: SAEMetrics?
    package var log: [SAELogRow]

    /// "TopK k 32" or "ReLU L1 5".
    package var kind: String { k.map { "TopK k \($0)" } ?? "ReLU L1 \(String(format: "%g", l1))" }
    package var finished: Bool { step >= steps }
}

/// A point of an SAE's training curve as a job's progress carries it to the TUI, which plots the
/// curve while the SAE trains.
package struct SAETrainingPoint: Hashable, Sendable {
    package var model: Int64
    package var log: SAELogRow

    package init(model: Int64, log: SAELogRow) {
        self.model = model
        self.log = log
    }

    private static let keys = ["sae_model", "step", "loss", "mse", "l0", "fvu", "dead", "dense", "learning_rate"]

    /// The point as ``JobProgress/values``.
    package var values: [String: Double] {
        let figures = [
            Double(model), Double(log.step), log.loss, log.mse, log.l0, log.fvu, log.dead, log.dense, log.learningRate,
        ]
        return Dictionary(uniqueKeysWithValues: zip(Self.keys, figures))
    }

    /// The point a progress report carries; nil for any other job's progress.
    package init?(values: [String: Double]) {
        let figures = Self.keys.compactMap { values[$0] }
        guard figures.count == Self.keys.count else { return nil }
        model = Int64(figures[0])
        log = SAELogRow(
            step: Int(figures[1]), loss: figures[2], mse: figures[3], l0: figures[4], fvu: figures[5],
            dead: figures[6], dense: figures[7], learningRate: figures[8])
    }
}

/// What the TUI's feature browser asks of the workspace: the SAEs, their features, a feature's
/// card, a text run through MiniLM and an SAE, labels. Feature indexes (every activation encoded
/// once) are kept per SAE and rebuilt when it has trained further.
package final class SAEBrowser: Sendable {
    let workspace: Workspace
    let models: ModelLibrary
    private let indexes = Mutex<[Int64: SAEFeatureIndex]>([:])

    package init(workspace: Workspace, models: ModelLibrary) {
        self.workspace = workspace
        self.models = models
    }

    package func listings() throws -> [SAEListing] {
        let sets = Dictionary(uniqueKeysWithValues: try workspace.activationSets().map { ($0.id, $0.rows) })
        return try workspace.saeModelHeaders().map { record in
            let settings = try SAEService.settings(from: record.settingsJSON)
            return SAEListing(
                id: record.id, activationSet: record.setID, layer: record.layer, width: record.width, k: settings.k,
                l1: settings.l1, step: record.step, steps: settings.steps, tokens: sets[record.setID] ?? 0,
                metrics: try record.metricsJSON.map { try JSONDecoder().decode(SAEMetrics.self, from: Data($0.utf8)) },
                log: try workspace.saeTrainingLog(record.id))
        }
    }

    /// The index of `model` at its current step, built on first use.
    package func index(_ model: Int64) throws -> SAEFeatureIndex {
        guard let record = try workspace.saeModelHeader(model) else { throw SAEError("there is no SAE \(model)") }
        return try indexes.withLock { cached in
            if let index = cached[model], index.step == record.step { return index }
            let index = try SAEFeatureIndex(model: model, workspace: workspace)
            cached[model] = index
            return index
        }
    }

    package func card(model: Int64, feature: Int) throws -> SAEFeatureIndex.Card {
        try index(model).card(feature, workspace: workspace, embedder: try? models.miniLM())
    }

    package func activate(model: Int64, text: String) throws -> SAETextActivations {
        let index = try index(model)
        return try SAETextActivations(text: text, sae: index.sae, layer: index.layer, embedder: try models.miniLM())
    }

    /// Stores `label` (empty removes it) and returns the features with it.
    package func label(model: Int64, feature: Int, label: String) throws -> [SAEFeatureIndex.Summary] {
        var index = try index(model)
        guard index.summaries.indices.contains(feature) else {
            throw SAEError("feature \(feature): SAE \(model) has features 0…\(index.summaries.count - 1)")
        }
        try workspace.setSAEFeatureLabel(model: model, feature: feature, label: label)
        index.summaries[feature].label = label.isEmpty ? nil : label
        indexes.withLock { [index] in $0[model] = index }
        return index.summaries
    }
}

extension SAEFeatureIndex.Card {
    /// The card as `sae feature --json` prints it and the browser's `e` exports it.
    package func json() throws -> String { try JSONText.pretty(self) }
}
