import Foundation
import LoupeStore

/// The recall/QPS curves of vector indexes measured on one workload (`loupe bench hnsw --record`,
/// which `scripts/bench/hnsw.sh` runs with hnswlib's, faiss's and usearch's sweeps beside
/// Loupe's), as ann-benchmarks draws them: recall@10 across, queries per second up.
package struct ANNCurves: Hashable, Sendable {
    package struct Curve: Hashable, Sendable {
        package var engine: String
        package var version: String?
        package var buildSeconds: Double?
        /// By recall, lowest first.
        package var points: [ANNSweepRecord.Point]
        package var measuredAt: Date

        /// Queries per second where the curve reaches `recall`: linear in recall between the
        /// points either side; nil when no point reaches it.
        package func queriesPerSecond(atRecall recall: Double) -> Double? {
            for (low, high) in zip(points, points.dropFirst())
            where low.recallAt10 <= recall && recall <= high.recallAt10 {
                guard high.recallAt10 > low.recallAt10 else { return max(low.queriesPerSecond, high.queriesPerSecond) }
                let share = (recall - low.recallAt10) / (high.recallAt10 - low.recallAt10)
                return low.queriesPerSecond + (high.queriesPerSecond - low.queriesPerSecond) * share
            }
            return points.first.flatMap { $0.recallAt10 >= recall ? $0.queriesPerSecond : nil }
        }
    }

    /// The recall the comparison is read at (the and ann-benchmarks' usual bar).
    package static let recall = 0.95

    package var workload: String
    /// Loupe first, then the peers by name.
    package var curves: [Curve]

    /// The latest sweep of each engine, grouped by workload (in the order given).
    package init(workload: String, sweeps: [ANNSweepRecord]) {
        self.workload = workload
        curves = sweeps.map { sweep in
            Curve(
                engine: sweep.engine, version: sweep.version, buildSeconds: sweep.buildSeconds,
                points: sweep.points.sorted {
                    ($0.recallAt10, -$0.queriesPerSecond) < ($1.recallAt10, -$1.queriesPerSecond)
                },
                measuredAt: sweep.measuredAt)
        }
        .sorted { (Self.rank($0.engine), $0.engine) < (Self.rank($1.engine), $1.engine) }
    }

    /// Loupe's default curve first, then Loupe's others, then the peers.
    private static func rank(_ engine: String) -> Int {
        engine == "loupe" ? 0 : isLoupe(engine) ? 1 : 2
    }

    /// Whether a curve is Loupe's: its default ("loupe") or another of its searches ("loupe f32",
    /// its beam on the float vectors), never a peer.
    private static func isLoupe(_ engine: String) -> Bool { engine == "loupe" || engine.hasPrefix("loupe ") }

    /// Every workload's curves.
    package static func grouped(_ sweeps: [ANNSweepRecord]) -> [ANNCurves] {
        var order: [String] = []
        var byWorkload: [String: [ANNSweepRecord]] = [:]
        for sweep in sweeps {
            if byWorkload[sweep.workload] == nil { order.append(sweep.workload) }
            byWorkload[sweep.workload, default: []].append(sweep)
        }
        return order.map { ANNCurves(workload: $0, sweeps: byWorkload[$0]!) }
    }

    /// Loupe's queries per second at ``recall`` over the best peer's there, with that peer; nil
    /// when Loupe or every peer never reaches it.
    package var ratio: (peer: String, ratio: Double)? {
        guard let loupe = curves.first(where: { $0.engine == "loupe" })?.queriesPerSecond(atRecall: Self.recall)
        else { return nil }
        let peers = curves.filter { !Self.isLoupe($0.engine) }.compactMap { curve in
            curve.queriesPerSecond(atRecall: Self.recall).map { (curve.engine, $0) }
        }
        guard let best = peers.max(by: { $0.1 < $1.1 }) else { return nil }
        return (best.0, loupe / best.1)
    }
}

extension RetrievalService {
    /// The latest recall/QPS sweeps in the workspace, by workload.
    package func annCurves() throws -> [ANNCurves] {
        ANNCurves.grouped(try RooflineTables(corpus.database).latestANNSweeps())
    }
}

extension RetrievalBrowser {
    /// The Retrieval panel's curves view.
    package func annCurves() throws -> [ANNCurves] { try service.annCurves() }
}
