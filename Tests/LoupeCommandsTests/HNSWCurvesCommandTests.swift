import Foundation
import LoupeKit
import LoupeRetrieval
import LoupeStore
import Testing

/// `bench hnsw --record` keeping Loupe's sweep and the peers' beside it, and `retrieval curves`
/// reading them back, through the real binary on a small clustered set.
@Suite struct HNSWCurvesCommandTests {
    /// The set `bench hnsw --synthetic` makes, as the raw little-endian Float32 file hnsw.sh
    /// writes for the peers and Loupe alike.
    static func vectors(_ count: Int, dimensions: Int, clusters: Int, seed: UInt64) -> Data {
        let values = Array(
            SyntheticVectors.clustered(count, dimensions: dimensions, clusters: clusters, seed: seed).joined())
        return values.withUnsafeBytes { Data($0) }
    }

    /// The shape of the JSON hnsw_peers.py prints (two of its three engines; numbers as a run
    /// on another machine would give them).
    static let peers = """
        {"hnswlib_build_seconds": 0.5, "sweep": [
            {"ef": 10, "recall_at10": 0.90, "queries_per_second": 20000},
            {"ef": 40, "recall_at10": 0.99, "queries_per_second": 8000}],
         "faiss_build_seconds": 0.7, "faiss_sweep": [
            {"ef": 10, "recall_at10": 0.80, "queries_per_second": 15000},
            {"ef": 40, "recall_at10": 0.94, "queries_per_second": 6000}],
         "versions": {"hnswlib": "0.8.0", "faiss": "1.9.0"}}
        """

    @Test func benchKeepsTheSweepsAndRetrievalCurvesReadsThemBack() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let workspace = directory + "/w.sqlite"
        let base = directory + "/vectors.f32"
        let queries = directory + "/queries.f32"
        let peers = directory + "/peers.json"
        try Self.vectors(600, dimensions: 16, clusters: 12, seed: 7).write(to: URL(fileURLWithPath: base))
        try Self.vectors(40, dimensions: 16, clusters: 12, seed: 99).write(to: URL(fileURLWithPath: queries))
        try Data(Self.peers.utf8).write(to: URL(fileURLWithPath: peers))
        let bench = [
            "--workspace", workspace, "bench", "hnsw", "--vectors", base, "--queries", queries, "--dimensions", "16",
            "--ef", "10,20,64", "--record", "--workload", "clustered 600 × 16",
        ]

        // A peers file that is not the peers' JSON is refused, and nothing is kept.
        try Data("{\"sweep\": 3}".utf8).write(to: URL(fileURLWithPath: directory + "/bad.json"))
        let bad = try TestEnvironment.run(bench + ["--peers", directory + "/bad.json"])
        #expect(bad.status != 0)
        #expect(bad.error.contains("bad.json: not the JSON scripts/bench/hnsw_peers.py prints"))
        let empty = try TestEnvironment.run(["--workspace", workspace, "retrieval", "curves"])
        #expect(empty.output.contains("no sweeps yet"))

        let run = try TestEnvironment.run(bench + ["--peers", peers])
        #expect(run.status == 0, "\(run.error)")
        let sweeps = try Workspace(path: workspace).roofline.latestANNSweeps()
        // Loupe's default search (the beam on 8-bit vectors) and its beam on the float vectors.
        #expect(sweeps.map(\.engine) == ["faiss", "hnswlib", "loupe", "loupe f32"])
        #expect(sweeps.allSatisfy { $0.workload == "clustered 600 × 16" })
        for engine in ["loupe", "loupe f32"] {
            let loupe = try #require(sweeps.first { $0.engine == engine })
            #expect(loupe.points.map(\.ef) == [10, 20, 64])
            #expect(loupe.points.allSatisfy { $0.queriesPerSecond > 0 && (0...1).contains($0.recallAt10) })
            // Exact ground truth on 600 vectors: a 64-wide beam finds nearly all of each top 10.
            #expect(loupe.points.last!.recallAt10 >= 0.95, "\(engine): \(loupe.points)")
        }
        #expect(sweeps.first { $0.engine == "hnswlib" }?.version == "0.8.0")

        let table = try TestEnvironment.run(["--workspace", workspace, "retrieval", "curves"])
        #expect(table.status == 0)
        #expect(table.output.contains("clustered 600 × 16"))
        func fields(_ engine: String) -> [String] {
            let line = table.output.split(separator: "\n").first { $0.hasPrefix("  \(engine) ") } ?? ""
            return line.split(separator: " ").prefix(4).map(String.init)
        }
        // hnswlib crosses 0.95 between its two points: 20000 + (8000 − 20000) · (0.05 / 0.09).
        #expect(fields("hnswlib") == ["hnswlib", "0.8.0", "0.5", "13333"])
        // faiss never gets there.
        #expect(fields("faiss") == ["faiss", "1.9.0", "0.7", "—"])
        #expect(fields("loupe").prefix(2) == ["loupe", "—"])
        let json = try TestEnvironment.run(["--workspace", workspace, "retrieval", "curves", "--json"])
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["engine"] as? String } == ["loupe", "loupe f32", "faiss", "hnswlib"])
    }
}
