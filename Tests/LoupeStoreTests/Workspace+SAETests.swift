import Foundation
import LoupeStore
import Testing

/// Collected activations, SAE checkpoints, training logs and feature labels.
@Suite struct WorkspaceSAETests {
    static func tokens(first: Int, count: Int, chunk: Int64 = 1) -> [SAETokenRecord] {
        (first..<(first + count)).map { SAETokenRecord(row: $0, chunkID: chunk, position: $0 - first, token: "t\($0)") }
    }

    @Test func shardsAppendRowsToTheirSetInOrder() throws {
        let workspace = try TemporaryWorkspace.make("sae")
        let set = try workspace.createActivationSet(model: "all-MiniLM-L6-v2", layer: 3, dimensions: 384)
        #expect(try workspace.activationSets().map(\.rows) == [0])
        try workspace.appendActivationShard(
            set: set, shard: 1, firstRow: 3, data: Data([3, 4]), tokens: Self.tokens(first: 3, count: 2))
        try workspace.appendActivationShard(
            set: set, shard: 0, firstRow: 0, data: Data([0, 1, 2]), tokens: Self.tokens(first: 0, count: 3))

        let stored = try #require(try workspace.activationSets().first)
        #expect(stored.id == set && stored.layer == 3 && stored.dimensions == 384 && stored.rows == 5)
        let shards = try workspace.activationShards(set: set)
        // By shard number, not by the order they were written.
        #expect(shards.map(\.firstRow) == [0, 3] && shards.map(\.rows) == [3, 2])
        #expect(shards.map(\.data) == [Data([0, 1, 2]), Data([3, 4])])

        let picked = try workspace.activationTokens(set: set, rows: [4, 0]).sorted { $0.row < $1.row }
        #expect(picked.map(\.token) == ["t0", "t4"] && picked.map(\.position) == [0, 1])
        #expect(try workspace.activationTokens(set: set, rows: []).isEmpty)
        #expect(try workspace.activationTokens(set: set + 1, rows: [0]).isEmpty)
    }

    @Test func aShardWhoseTokensClashLeavesTheSetAsItWas() throws {
        let workspace = try TemporaryWorkspace.make("sae")
        let set = try workspace.createActivationSet(model: "m", layer: 0, dimensions: 4)
        try workspace.appendActivationShard(
            set: set, shard: 0, firstRow: 0, data: Data([0]), tokens: Self.tokens(first: 0, count: 2))
        // Rows 1 and 2: row 1 is already stored.
        #expect(throws: WorkspaceError.self) {
            try workspace.appendActivationShard(
                set: set, shard: 1, firstRow: 1, data: Data([1]), tokens: Self.tokens(first: 1, count: 2))
        }
        #expect(try workspace.activationSets().first?.rows == 2)
        #expect(try workspace.activationShards(set: set).count == 1)
    }

    @Test func checkpointsKeepTheLatestStateAndTheWholeLog() throws {
        let workspace = try TemporaryWorkspace.make("sae")
        let set = try workspace.createActivationSet(model: "m", layer: 2, dimensions: 4)
        let id = try workspace.createSAEModel(
            set: set, layer: 2, width: 16, settingsJSON: #"{"l1":0.001}"#, state: Data([0, 0]))
        let created = try #require(try workspace.saeModel(id))
        #expect(created.step == 0 && created.state == Data([0, 0]) && created.metricsJSON == nil)

        func row(_ step: Int, loss: Double) -> SAELogRow {
            SAELogRow(
                step: step, loss: loss, mse: loss / 2, l0: 3, fvu: 0.2, dead: 0.1, dense: 0.05, learningRate: 1e-3)
        }
        try workspace.checkpointSAE(
            id, step: 10, state: Data([1, 1]), metricsJSON: nil, log: [row(5, loss: 2), row(10, loss: 1.5)])
        try workspace.checkpointSAE(
            id, step: 20, state: Data([2, 2, 2]), metricsJSON: #"{"fvu":0.1}"#, log: [row(20, loss: 1)])
        let model = try #require(try workspace.saeModel(id))
        #expect(model.step == 20 && model.state == Data([2, 2, 2]) && model.metricsJSON == #"{"fvu":0.1}"#)
        #expect(try workspace.saeTrainingLog(id) == [row(5, loss: 2), row(10, loss: 1.5), row(20, loss: 1)])
        // A resumed run logging a step again replaces that step's row.
        try workspace.checkpointSAE(id, step: 20, state: Data([3]), metricsJSON: nil, log: [row(20, loss: 0.9)])
        #expect(try workspace.saeTrainingLog(id).map(\.loss) == [2, 1.5, 0.9])

        #expect(try workspace.saeModels().map(\.id) == [id])
        #expect(try workspace.saeModel(id + 1) == nil)
    }

    @Test func headersLeaveTheParametersOut() throws {
        let workspace = try TemporaryWorkspace.make("sae")
        let set = try workspace.createActivationSet(model: "m", layer: 1, dimensions: 4)
        let id = try workspace.createSAEModel(
            set: set, layer: 1, width: 8, settingsJSON: "{}", state: Data(repeating: 7, count: 4096))
        let header = try #require(try workspace.saeModelHeader(id))
        #expect(header.state.isEmpty && header.width == 8 && header.setID == set)
        #expect(try workspace.saeModelHeaders().map(\.state) == [Data()])
        #expect(try workspace.saeModel(id)?.state.count == 4096)
        #expect(try workspace.saeModelHeader(id + 1) == nil)
    }

    @Test func featureLabelsAreSetReplacedAndClearedPerModel() throws {
        let workspace = try TemporaryWorkspace.make("sae")
        let set = try workspace.createActivationSet(model: "m", layer: 1, dimensions: 4)
        let a = try workspace.createSAEModel(set: set, layer: 1, width: 8, settingsJSON: "{}", state: Data())
        let b = try workspace.createSAEModel(set: set, layer: 1, width: 8, settingsJSON: "{}", state: Data())
        try workspace.setSAEFeatureLabel(model: a, feature: 3, label: "plural nouns")
        try workspace.setSAEFeatureLabel(model: a, feature: 5, label: "digits")
        try workspace.setSAEFeatureLabel(model: a, feature: 3, label: "nouns")
        try workspace.setSAEFeatureLabel(model: b, feature: 3, label: "other model")
        #expect(try workspace.saeFeatureLabels(model: a) == [3: "nouns", 5: "digits"])
        // No label, or an empty one, removes it.
        try workspace.setSAEFeatureLabel(model: a, feature: 5, label: nil)
        try workspace.setSAEFeatureLabel(model: a, feature: 3, label: "")
        #expect(try workspace.saeFeatureLabels(model: a).isEmpty)
        #expect(try workspace.saeFeatureLabels(model: b) == [3: "other model"])
    }
}
