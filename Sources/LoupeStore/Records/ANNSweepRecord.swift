import Foundation
import GRDB

/// One vector index measured over its search breadth: recall@10 and queries per second at each
/// efSearch, on one workload, by one engine (Loupe's HNSW, or a peer measured on the same files).
package struct ANNSweepRecord: Codable, FetchableRecord, MutablePersistableRecord, Hashable, Sendable {
    package struct Point: Codable, Hashable, Sendable {
        package var ef: Int
        package var recallAt10: Double
        package var queriesPerSecond: Double

        package init(ef: Int, recallAt10: Double, queriesPerSecond: Double) {
            self.ef = ef
            self.recallAt10 = recallAt10
            self.queriesPerSecond = queriesPerSecond
        }

        enum CodingKeys: String, CodingKey {
            case ef
            case recallAt10 = "recall_at10"
            case queriesPerSecond = "queries_per_second"
        }
    }

    package static let databaseTableName = "ann_sweeps"
    package var id: Int64?
    /// The vectors and queries, in words (`synthetic 100000 × 384, 1000 queries`).
    package var workload: String
    package var engine: String
    package var version: String?
    package var buildSeconds: Double?
    package var points: [Point]
    package var machine: String
    package var measuredAt: Date

    package init(
        workload: String, engine: String, version: String? = nil, buildSeconds: Double? = nil, points: [Point],
        machine: String, measuredAt: Date = Date()
    ) {
        self.workload = workload
        self.engine = engine
        self.version = version
        self.buildSeconds = buildSeconds
        self.points = points
        self.machine = machine
        self.measuredAt = measuredAt
    }

    package mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    enum CodingKeys: String, CodingKey {
        case id, workload, engine, version, machine
        case buildSeconds = "build_seconds"
        case points = "points_json"
        case measuredAt = "measured_at"
    }
}
