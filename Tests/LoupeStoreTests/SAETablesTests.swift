import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// Collected activations, SAE checkpoints, training logs and feature labels. Every test runs on a
/// SQLite workspace and on a real PostgreSQL server.
@Suite struct SAETablesTests {
    typealias Backend = StoreBackend

    static func tokens(first: Int, count: Int, chunk: Int64 = 1) -> [SAETokenRecord] {
        (first..<(first + count)).map { SAETokenRecord(row: $0, chunkID: chunk, position: $0 - first, token: "t\($0)") }
    }

    @Test(arguments: Backend.allCases) func shardsAppendRowsToTheirSetInOrder(_ backend: Backend) throws {
        let tables = SAETables(try backend.database("sae"))
        let set = try tables.createActivationSet(model: "all-MiniLM-L6-v2", layer: 3, dimensions: 384)
        #expect(try tables.activationSets().map(\.rows) == [0])
        try tables.appendActivationShard(
            set: set, shard: 1, firstRow: 3, data: Data([3, 4]), tokens: Self.tokens(first: 3, count: 2))
        try tables.appendActivationShard(
            set: set, shard: 0, firstRow: 0, data: Data([0, 1, 2]), tokens: Self.tokens(first: 0, count: 3))

        let stored = try #require(try tables.activationSets().first)
        #expect(stored.id == set && stored.layer == 3 && stored.dimensions == 384 && stored.rows == 5)
        let shards = try tables.activationShards(set: set)
        // By shard number, not by the order they were written.
        #expect(shards.map(\.firstRow) == [0, 3] && shards.map(\.rows) == [3, 2])
        #expect(shards.map(\.data) == [Data([0, 1, 2]), Data([3, 4])])

        let picked = try tables.activationTokens(set: set, rows: [4, 0]).sorted { $0.row < $1.row }
        #expect(picked.map(\.token) == ["t0", "t4"] && picked.map(\.position) == [0, 1])
        #expect(try tables.activationTokens(set: set, rows: []).isEmpty)
        #expect(try tables.activationTokens(set: set + 1, rows: [0]).isEmpty)
    }

    @Test(arguments: Backend.allCases) func aShardWhoseTokensClashLeavesTheSetAsItWas(_ backend: Backend) throws {
        let tables = SAETables(try backend.database("sae"))
        let set = try tables.createActivationSet(model: "m", layer: 0, dimensions: 4)
        try tables.appendActivationShard(
            set: set, shard: 0, firstRow: 0, data: Data([0]), tokens: Self.tokens(first: 0, count: 2))
        // Rows 1 and 2: row 1 is already stored.
        #expect(throws: WorkspaceError.self) {
            try tables.appendActivationShard(
                set: set, shard: 1, firstRow: 1, data: Data([1]), tokens: Self.tokens(first: 1, count: 2))
        }
        #expect(try tables.activationSets().first?.rows == 2)
        #expect(try tables.activationShards(set: set).count == 1)
    }

    @Test(arguments: Backend.allCases) func checkpointsKeepTheLatestStateAndTheWholeLog(_ backend: Backend) throws {
        let tables = SAETables(try backend.database("sae"))
        let set = try tables.createActivationSet(model: "m", layer: 2, dimensions: 4)
        let id = try tables.createSAEModel(
            set: set, layer: 2, width: 16, settingsJSON: #"{"l1":0.001}"#, state: Data([0, 0]))
        let created = try #require(try tables.saeModel(id))
        #expect(created.step == 0 && created.state == Data([0, 0]) && created.metricsJSON == nil)

        func row(_ step: Int, loss: Double) -> SAELogRow {
            SAELogRow(
                step: step, loss: loss, mse: loss / 2, l0: 3, fvu: 0.2, dead: 0.1, dense: 0.05, learningRate: 1e-3)
        }
        try tables.checkpointSAE(
            id, step: 10, state: Data([1, 1]), metricsJSON: nil, log: [row(5, loss: 2), row(10, loss: 1.5)])
        try tables.checkpointSAE(
            id, step: 20, state: Data([2, 2, 2]), metricsJSON: #"{"fvu":0.1}"#, log: [row(20, loss: 1)])
        let model = try #require(try tables.saeModel(id))
        #expect(model.step == 20 && model.state == Data([2, 2, 2]) && model.metricsJSON == #"{"fvu":0.1}"#)
        #expect(try tables.saeTrainingLog(id) == [row(5, loss: 2), row(10, loss: 1.5), row(20, loss: 1)])
        // A resumed run logging a step again replaces that step's row.
        try tables.checkpointSAE(id, step: 20, state: Data([3]), metricsJSON: nil, log: [row(20, loss: 0.9)])
        #expect(try tables.saeTrainingLog(id).map(\.loss) == [2, 1.5, 0.9])

        #expect(try tables.saeModels().map(\.id) == [id])
        #expect(try tables.saeModel(id + 1) == nil)
    }

    @Test(arguments: Backend.allCases) func headersLeaveTheParametersOut(_ backend: Backend) throws {
        let tables = SAETables(try backend.database("sae"))
        let set = try tables.createActivationSet(model: "m", layer: 1, dimensions: 4)
        let id = try tables.createSAEModel(
            set: set, layer: 1, width: 8, settingsJSON: "{}", state: Data(repeating: 7, count: 4096))
        let header = try #require(try tables.saeModelHeader(id))
        #expect(header.state.isEmpty && header.width == 8 && header.setID == set)
        #expect(try tables.saeModelHeaders().map(\.state) == [Data()])
        #expect(try tables.saeModel(id)?.state.count == 4096)
        #expect(try tables.saeModelHeader(id + 1) == nil)
    }

    @Test(arguments: Backend.allCases) func featureLabelsAreSetReplacedAndClearedPerModel(_ backend: Backend) throws {
        let tables = SAETables(try backend.database("sae"))
        let set = try tables.createActivationSet(model: "m", layer: 1, dimensions: 4)
        let a = try tables.createSAEModel(set: set, layer: 1, width: 8, settingsJSON: "{}", state: Data())
        let b = try tables.createSAEModel(set: set, layer: 1, width: 8, settingsJSON: "{}", state: Data())
        try tables.setSAEFeatureLabel(model: a, feature: 3, label: "plural nouns")
        try tables.setSAEFeatureLabel(model: a, feature: 5, label: "digits")
        try tables.setSAEFeatureLabel(model: a, feature: 3, label: "nouns")
        try tables.setSAEFeatureLabel(model: b, feature: 3, label: "other model")
        #expect(try tables.saeFeatureLabels(model: a) == [3: "nouns", 5: "digits"])
        // No label, or an empty one, removes it.
        try tables.setSAEFeatureLabel(model: a, feature: 5, label: nil)
        try tables.setSAEFeatureLabel(model: a, feature: 3, label: "")
        #expect(try tables.saeFeatureLabels(model: a).isEmpty)
        #expect(try tables.saeFeatureLabels(model: b) == [3: "other model"])
    }

    @Test(arguments: Backend.allCases) func rowsAreReadAsSlicesOfTheShardsThatHoldThem(_ backend: Backend) throws {
        let tables = SAETables(try backend.database("sae"))
        let set = try tables.createActivationSet(model: "m", layer: 0, dimensions: 2)
        // Rows of 2 bytes: row r holds bytes (2r, 2r+1). Shards of 3, 3 and 2 rows.
        func bytes(_ rows: Range<Int>) -> Data { Data(rows.flatMap { [UInt8(2 * $0), UInt8(2 * $0 + 1)] }) }
        for (shard, rows) in [0..<3, 3..<6, 6..<8].enumerated() {
            try tables.appendActivationShard(
                set: set, shard: shard, firstRow: rows.lowerBound, data: bytes(rows),
                tokens: Self.tokens(first: rows.lowerBound, count: rows.count))
        }
        let parts = try tables.activationRowBytes(set: set, rows: 2..<7, bytesPerRow: 2)
        #expect(parts.map(\.firstRow) == [2, 3, 6])
        #expect(parts.map(\.data) == [bytes(2..<3), bytes(3..<6), bytes(6..<7)])
        #expect(try tables.activationRowBytes(set: set, rows: 4..<5, bytesPerRow: 2).map(\.data) == [bytes(4..<5)])
        #expect(try tables.activationRowBytes(set: set, rows: 8..<10, bytesPerRow: 2).isEmpty)
    }

    /// A SQLite workspace seen only through SQL: the protocol's default capabilities, which a
    /// backend without SQLite's blob I/O (PostgreSQL) runs, instead of the workspace's own.
    struct SQLOnly: SQLDatabase {
        let base: Workspace
        var dialect: SQLDialect { base.dialect }
        var displayName: String { base.displayName }
        func readStatements<T: Sendable>(_ body: @Sendable (any SQLStatements) throws -> T) throws(WorkspaceError)
            -> T
        { try base.readStatements(body) }
        func writeStatements<T: Sendable>(_ body: @Sendable (any SQLStatements) throws -> T) throws(WorkspaceError)
            -> T
        { try base.writeStatements(body) }
    }

    /// The default capabilities in SQL read and write what SQLite's blob I/O does, on SQLite too.
    @Test func theSQLDefaultsReadAndWriteWhatBlobIODoes() throws {
        let workspace = try TemporaryWorkspace.make("sae-sql-only")
        let (tables, sqlOnly) = (SAETables(workspace), SAETables(SQLOnly(base: workspace)))
        let set = try tables.createActivationSet(model: "m", layer: 0, dimensions: 2)
        let data = Data((0..<16).map(UInt8.init))
        for (shard, first) in [0, 3, 6].enumerated() {
            try tables.appendActivationShard(
                set: set, shard: shard, firstRow: first, data: data[(2 * first)..<min(16, 2 * first + 6)],
                tokens: Self.tokens(first: first, count: min(3, 8 - first)))
        }
        for rows in [2..<7, 0..<8, 4..<5, 7..<8, 8..<10] {
            let fast = try tables.activationRowBytes(set: set, rows: rows, bytesPerRow: 2)
            let inSQL = try sqlOnly.activationRowBytes(set: set, rows: rows, bytesPerRow: 2)
            #expect(inSQL.map(\.firstRow) == fast.map(\.firstRow), "rows \(rows)")
            #expect(inSQL.map(\.data) == fast.map(\.data), "rows \(rows)")
        }
        let index = Data((0..<1000).map { UInt8($0 % 251) })
        for database in [workspace, SQLOnly(base: workspace)] as [any SQLDatabase] {
            try CorpusTables(database).storeIndex(
                StoredIndex(kind: "hnsw", paramsJSON: "{}", corpusStamp: "s", data: index))
            #expect(try CorpusTables(workspace).storedIndex(kind: "hnsw")?.data == index)
            try CorpusTables(database).storeIndex(
                StoredIndex(kind: "hnsw", paramsJSON: "{}", corpusStamp: "s", data: Data()))
            #expect(try CorpusTables(workspace).storedIndex(kind: "hnsw")?.data == Data())
        }
    }

    @Test(arguments: Backend.allCases) func theStoredFeatureIndexIsReplacedWithTheStep(_ backend: Backend) throws {
        let tables = SAETables(try backend.database("sae"))
        let set = try tables.createActivationSet(model: "m", layer: 1, dimensions: 4)
        let id = try tables.createSAEModel(set: set, layer: 1, width: 8, settingsJSON: "{}", state: Data())
        #expect(try tables.saeFeatureIndex(model: id) == nil)
        try tables.storeSAEFeatureIndex(model: id, step: 10, data: Data([1, 2]))
        try tables.storeSAEFeatureIndex(model: id, step: 20, data: Data([3]))
        let stored = try #require(try tables.saeFeatureIndex(model: id))
        #expect(stored.step == 20 && stored.data == Data([3]))
    }

    @Test(arguments: Backend.allCases) func aLeaseIsClaimedOnceAndTakenOverWhenItsHolderIsGone(_ backend: Backend)
        throws
    {
        let leases = LeaseTables(try backend.database("sae"))
        #expect(try leases.claimLease(kind: JobLease.Kind.saeModel, targetID: 1) == nil)
        // Ours already: claimed again.
        #expect(try leases.claimLease(kind: JobLease.Kind.saeModel, targetID: 1) == nil)
        // Another host's live lease is left alone and named; once stale it is taken over.
        let now = Date()
        let other = JobLease(
            kind: JobLease.Kind.saeModel, targetID: 2, pid: 1, host: "elsewhere", startedAt: now, heartbeatAt: now)
        try leases.database.writeStatements { sql in _ = try sql.insert(other) }
        #expect(try leases.claimLease(kind: JobLease.Kind.saeModel, targetID: 2, now: now)?.host == "elsewhere")
        #expect(
            try leases.claimLease(
                kind: JobLease.Kind.saeModel, targetID: 2, now: now.addingTimeInterval(JobLease.staleAfterSeconds + 1))
                == nil)
        #expect(try leases.leases(kind: JobLease.Kind.saeModel)[2]?.isMine == true)
    }
}
