import Foundation
import LoupeModels
import LoupeStore
import Synchronization

/// What the TUI's feature browser asks of the workspace: the SAEs, their features, a feature's
/// card, a text run through MiniLM and an SAE, labels. Feature indexes (every activation encoded
/// once) are kept per SAE and rebuilt when it has trained further.
package final class SAEBrowser: Sendable {
    let database: any SQLDatabase
    let models: ModelLibrary
    private let indexes = Mutex<[Int64: SAEFeatureIndex]>([:])
    private var tables: SAETables { SAETables(database) }

    package init(database: any SQLDatabase, models: ModelLibrary) {
        self.database = database
        self.models = models
    }

    package convenience init(workspace: Workspace, models: ModelLibrary) {
        self.init(database: workspace, models: models)
    }

    package func listings() throws -> [SAEListing] {
        let all = try tables.activationSets()
        let sets = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0.rows) })
        let sources = Dictionary(uniqueKeysWithValues: all.map { ($0.id, $0.model) })
        return try tables.saeModelHeaders().map { record in
            let settings = try SAEService.settings(from: record.settingsJSON, sae: record.id)
            return SAEListing(
                id: record.id, activationSet: record.setID, layer: record.layer, width: record.width, k: settings.k,
                l1: settings.l1, step: record.step, steps: settings.steps, tokens: sets[record.setID] ?? 0,
                metrics: try record.metricsJSON.map { json throws(StoredValueError) in
                    try SAEMetrics.stored(json, sae: record.id)
                },
                log: try tables.saeTrainingLog(record.id), source: sources[record.setID])
        }
    }

    /// The index of `model` at its current step: kept in memory once read, read from the
    /// workspace when `sae train` stored it, built (with progress on `reporter`) when not.
    package func index(_ model: Int64, reporter: JobReporter = .detached()) throws -> SAEFeatureIndex {
        guard let record = try tables.saeModelHeader(model) else { throw SAEError("there is no SAE \(model)") }
        return try indexes.withLock { cached in
            if let index = cached[model], index.step == record.step { return index }
            let index = try SAEFeatureIndex(model: model, database: database, reporter: reporter)
            cached[model] = index
            return index
        }
    }

    package func card(model: Int64, feature: Int) throws -> SAEFeatureIndex.Card {
        try index(model).card(feature, database: database, models: models)
    }

    package func activate(model: Int64, text: String) throws -> SAETextActivations {
        let index = try index(model)
        if index.source == SAEService.languageModelName {
            return try SAETextActivations(
                text: text, sae: index.sae, layer: index.layer, generator: try models.smolLM2())
        }
        return try SAETextActivations(text: text, sae: index.sae, layer: index.layer, embedder: try models.miniLM())
    }

    /// The features of `model` with their labels read again (another annotator may have labelled
    /// on a shared workspace); the index is the one kept.
    package func relabelled(_ model: Int64) throws -> [SAEFeatureIndex.Summary] {
        var index = try index(model)
        let labels = try tables.saeFeatureLabels(model: model)
        for j in index.summaries.indices { index.summaries[j].label = labels[j] }
        indexes.withLock { [index] in $0[model] = index }
        return index.summaries
    }

    /// Stores `label` (empty removes it) and returns the features with it.
    package func label(model: Int64, feature: Int, label: String) throws -> [SAEFeatureIndex.Summary] {
        var index = try index(model)
        guard index.summaries.indices.contains(feature) else {
            throw SAEError("feature \(feature): SAE \(model) has features 0…\(index.summaries.count - 1)")
        }
        try tables.setSAEFeatureLabel(model: model, feature: feature, label: label)
        index.summaries[feature].label = label.isEmpty ? nil : label
        indexes.withLock { [index] in $0[model] = index }
        return index.summaries
    }
}

extension SAEFeatureIndex.Card {
    /// The card as `sae feature --json` prints it and the browser's `e` exports it.
    package func json() throws -> String { try JSONText.pretty(self) }
}
