import Foundation
import LoupeKit
import LoupeStore
import Testing

@Suite struct ANNCurvesTests {
    static func sweep(_ engine: String, _ workload: String, _ points: [(Int, Double, Double)]) -> ANNSweepRecord {
        ANNSweepRecord(
            workload: workload, engine: engine,
            points: points.map { .init(ef: $0.0, recallAt10: $0.1, queriesPerSecond: $0.2) },
            machine: "test")
    }

    @Test func theRateAtARecallIsReadBetweenTheSweepsPoints() throws {
        let curves = ANNCurves.grouped([
            Self.sweep("hnswlib", "a", [(32, 0.97, 5000), (10, 0.90, 12000), (16, 0.94, 9000)]),
            Self.sweep("loupe", "a", [(10, 0.93, 16000), (16, 0.96, 11000)]),
            Self.sweep("faiss", "a", [(10, 0.70, 30000)]),
            // Loupe's own other curve: drawn after Loupe's, never counted as a peer.
            Self.sweep("loupe f32", "a", [(10, 0.99, 90000)]),
            Self.sweep("loupe", "b", [(10, 0.99, 7000)]),
        ])
        #expect(curves.map(\.workload) == ["a", "b"])
        let a = curves[0]
        // Loupe first, its other curves next, then the peers by name; each curve by recall.
        #expect(a.curves.map(\.engine) == ["loupe", "loupe f32", "faiss", "hnswlib"])
        #expect(a.curves[3].points.map(\.ef) == [10, 16, 32])
        let hnswlib = try #require(a.curves[3].queriesPerSecond(atRecall: 0.95))
        #expect(abs(hnswlib - (9000 + (5000 - 9000) * (0.01 / 0.03))) < 1e-6)
        let loupe = try #require(a.curves[0].queriesPerSecond(atRecall: 0.95))
        #expect(abs(loupe - (16000 + (11000 - 16000) * (0.02 / 0.03))) < 1e-6)
        // Never reached: no rate; all above it: the fastest point that reaches it.
        #expect(a.curves[2].queriesPerSecond(atRecall: 0.95) == nil)
        #expect(curves[1].curves[0].queriesPerSecond(atRecall: 0.95) == 7000)
        let ratio = try #require(a.ratio)
        #expect(ratio.peer == "hnswlib" && abs(ratio.ratio - loupe / hnswlib) < 1e-12)
        #expect(curves[1].ratio == nil)
    }
}
