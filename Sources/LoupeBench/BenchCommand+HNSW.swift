import ArgumentParser
import Foundation
import LoupeCommands
import LoupeKit
import LoupeRetrieval
import LoupeStore

extension BenchCommand {
    struct HNSW: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "hnsw",
            abstract:
                "HNSW build time, memory, and single-thread recall@10 / queries per second over an efSearch sweep.",
            discussion: """
                Vectors and queries are raw little-endian Float32 files (rows of --dimensions), normalised \
                here; the ground truth is exact cosine (one sgemm per query). scripts/bench/hnsw.sh writes \
                the 100k × 384 clustered set and runs hnswlib, faiss and usearch on the same files. \
                --record keeps the sweep in the workspace, with the peers' from --peers (the JSON \
                scripts/bench/hnsw_peers.py prints), for `loupe retrieval curves` and the Retrieval \
                panel's curves (c).
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Vectors, raw Float32.") var vectors: String?
        @Option(help: "Queries, raw Float32.") var queries: String?
        @Option(
            help: """
                Instead of files: this many vectors around count/100 centres (fixed seed), and \
                count/20 queries drawn the same way.
                """)
        var synthetic: Int?
        @Option(help: "Dimensions of a row.") var dimensions = 384
        @Option(help: "M.") var m = 16
        @Option(help: "efConstruction.") var efConstruction = 200
        @Option(help: "How an insert measures distances (its beam and the neighbour heuristic): float32 or int8.")
        var buildBeam = "int8"
        @Option(help: "efSearch values to sweep, comma-separated.") var ef = "10,16,24,32,48,64,96,128"
        @Flag(help: "Print JSON.") var json = false
        @Flag(help: "Keep the sweep in the workspace (and the peers' with it, from --peers).") var record = false
        @Option(help: "The peers' sweeps on the same files: the JSON scripts/bench/hnsw_peers.py prints.")
        var peers: String?
        @Option(help: "The workload's name in the workspace (default: its shape).") var workload: String?

        struct Point: Encodable {
            var ef: Int
            var recallAt10: Double
            var queriesPerSecond: Double
        }

        struct Result: Encodable {
            var vectors: Int
            var queries: Int
            var dimensions: Int
            var buildSeconds: Double
            var graphBytes: Int
            var rawVectorBytes: Int
            /// The default search: level 0's beam on 8-bit vectors, ranked by the exact distance.
            var sweep: [Point]
            /// The beam on the float vectors themselves.
            var float32Sweep: [Point]

            enum CodingKeys: String, CodingKey {
                case vectors, queries, dimensions, buildSeconds, graphBytes, rawVectorBytes, sweep
                case float32Sweep = "float32_sweep"
            }
        }

        static func load(_ path: String, dimensions: Int) throws -> [[Float]] {
            let data: Data
            do {
                data = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw CommandFailure("\(path): cannot be read (\(error.localizedDescription))")
            }
            guard data.count % (4 * dimensions) == 0 else {
                throw CommandFailure("\(path): not a whole number of \(dimensions)-dimensional Float32 rows")
            }
            let floats = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
            return stride(from: 0, to: floats.count, by: dimensions).map { start in
                let row = Array(floats[start..<(start + dimensions)])
                let norm = max(row.reduce(0) { $0 + $1 * $1 }.squareRoot(), 1e-12)
                return row.map { $0 / norm }
            }
        }

        func run(in context: CommandContext) throws {
            let base: [[Float]]
            let probes: [[Float]]
            if let synthetic {
                guard synthetic >= 100, vectors == nil, queries == nil else {
                    throw CommandFailure("--synthetic takes a count of at least 100, and no --vectors or --queries")
                }
                base = SyntheticVectors.clustered(synthetic, dimensions: dimensions, clusters: synthetic / 100, seed: 7)
                probes = SyntheticVectors.clustered(
                    synthetic / 20, dimensions: dimensions, clusters: synthetic / 100, seed: 99)
            } else {
                guard let vectors, let queries else {
                    throw CommandFailure("give --vectors and --queries (raw Float32 files), or --synthetic COUNT")
                }
                base = try Self.load(vectors, dimensions: dimensions)
                probes = try Self.load(queries, dimensions: dimensions)
            }
            let sweep = ef.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            var flat = FlatIndex(dimensions: dimensions)
            for vector in base { flat.add(vector) }
            let truth = probes.map { Set(flat.search($0, k: 10).map(\.index)) }
            guard let beam = HNSWIndex.Beam(rawValue: buildBeam) else {
                throw CommandFailure("--build-beam \(buildBeam): use float32 or int8")
            }
            var index = HNSWIndex(
                dimensions: dimensions, parameters: .init(m: m, efConstruction: efConstruction, buildBeam: beam))
            var start = DispatchTime.now().uptimeNanoseconds
            for (position, vector) in base.enumerated() {
                if position % 5000 == 0 {
                    try context.reporter.checkCancellation()
                    context.reporter.report(
                        JobProgress(completed: Double(position), total: Double(base.count), detail: "building"))
                }
                index.add(vector)
            }
            let buildSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            var sweeps: [HNSWIndex.Beam: [Point]] = [:]
            for value in sweep {
                // The two beams alternate at each ef, so that a change in the machine's load falls
                // on both.
                for beam in [HNSWIndex.Beam.int8, .float32] {
                    var best = Double.infinity
                    var answers: [[(index: Int, score: Float)]] = []
                    for _ in 0..<3 {
                        // Only the searches are timed, as the peers' one call over all the queries;
                        // recall is counted after.
                        answers.removeAll(keepingCapacity: true)
                        start = DispatchTime.now().uptimeNanoseconds
                        for query in probes { answers.append(index.search(query, k: 10, ef: value, beam: beam)) }
                        best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                    }
                    let found = zip(answers, truth).reduce(0) { sum, pair in
                        sum + pair.0.filter { pair.1.contains($0.index) }.count
                    }
                    sweeps[beam, default: []].append(
                        Point(
                            ef: value, recallAt10: Double(found) / Double(probes.count * 10),
                            queriesPerSecond: Double(probes.count) / best))
                }
            }
            let points = sweeps[.int8] ?? []
            let result = Result(
                vectors: base.count, queries: probes.count, dimensions: dimensions, buildSeconds: buildSeconds,
                graphBytes: index.graphBytes, rawVectorBytes: base.count * dimensions * 4, sweep: points,
                float32Sweep: sweeps[.float32] ?? [])
            if record {
                let shape =
                    "\(base.count) × \(dimensions), \(probes.count) queries, M \(m), efConstruction \(efConstruction)"
                let name = workload ?? (synthetic == nil ? shape : "synthetic (\(base.count / 100) centres) " + shape)
                var records = [("loupe", points), ("loupe f32", result.float32Sweep)].map { engine, points in
                    ANNSweepRecord(
                        workload: name, engine: engine, buildSeconds: buildSeconds,
                        points: points.map {
                            .init(ef: $0.ef, recallAt10: $0.recallAt10, queriesPerSecond: $0.queriesPerSecond)
                        },
                        machine: KernelRun.thisMachine)
                }
                if let peers { records += try Self.peerSweeps(peers, workload: name) }
                try context.roofline().record(records)
            }
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                String(
                    format:
                        "HNSW M %d, efConstruction %d: %d × %d built in %.1f s; graph %.1f MB (raw vectors %.1f MB)", m,
                    efConstruction, base.count, dimensions, buildSeconds, Double(result.graphBytes) / 1e6,
                    Double(result.rawVectorBytes) / 1e6))
            context.print("  beam on 8-bit vectors (the default)        beam on float vectors")
            for (point, float) in zip(points, result.float32Sweep) {
                context.print(
                    String(
                        format: "  ef %4d  recall@10 %.4f  %8.0f queries/s   recall@10 %.4f  %8.0f queries/s", point.ef,
                        point.recallAt10, point.queriesPerSecond, float.recallAt10, float.queriesPerSecond))
            }
        }

        /// The peers' sweeps from hnsw_peers.py's JSON: `sweep` (hnswlib), `faiss_sweep` and
        /// `usearch_sweep`, and the 8-bit ones `usearch_i8_sweep` and `faiss_sq8_sweep`, each with
        /// its `…_build_seconds` and its version under `versions`.
        static func peerSweeps(_ path: String, workload: String) throws -> [ANNSweepRecord] {
            struct Peers: Decodable {
                var sweep: [ANNSweepRecord.Point]?
                var faissSweep: [ANNSweepRecord.Point]?
                var usearchSweep: [ANNSweepRecord.Point]?
                var usearchI8Sweep: [ANNSweepRecord.Point]?
                var faissSQ8Sweep: [ANNSweepRecord.Point]?
                var hnswlibBuildSeconds: Double?
                var faissBuildSeconds: Double?
                var usearchBuildSeconds: Double?
                var usearchI8BuildSeconds: Double?
                var faissSQ8BuildSeconds: Double?
                var versions: [String: String]?

                enum CodingKeys: String, CodingKey {
                    case sweep, versions
                    case faissSweep = "faiss_sweep"
                    case usearchSweep = "usearch_sweep"
                    case hnswlibBuildSeconds = "hnswlib_build_seconds"
                    case faissBuildSeconds = "faiss_build_seconds"
                    case usearchBuildSeconds = "usearch_build_seconds"
                    case usearchI8Sweep = "usearch_i8_sweep"
                    case faissSQ8Sweep = "faiss_sq8_sweep"
                    case usearchI8BuildSeconds = "usearch_i8_build_seconds"
                    case faissSQ8BuildSeconds = "faiss_sq8_build_seconds"
                }
            }
            let text = try BenchCommand.readInput(path)
            guard let peers = try? JSONDecoder().decode(Peers.self, from: Data(text.utf8)) else {
                throw CommandFailure("\(path): not the JSON scripts/bench/hnsw_peers.py prints")
            }
            // (engine, its package under `versions`, sweep, build seconds)
            let engines: [(String, String, [ANNSweepRecord.Point]?, Double?)] = [
                ("hnswlib", "hnswlib", peers.sweep, peers.hnswlibBuildSeconds),
                ("faiss", "faiss", peers.faissSweep, peers.faissBuildSeconds),
                ("usearch", "usearch", peers.usearchSweep, peers.usearchBuildSeconds),
                ("usearch i8", "usearch", peers.usearchI8Sweep, peers.usearchI8BuildSeconds),
                ("faiss sq8", "faiss", peers.faissSQ8Sweep, peers.faissSQ8BuildSeconds),
            ]
            let found = engines.compactMap { engine, package, points, build in
                points.map {
                    ANNSweepRecord(
                        workload: workload, engine: engine, version: peers.versions?[package], buildSeconds: build,
                        points: $0, machine: KernelRun.thisMachine)
                }
            }
            guard !found.isEmpty else { throw CommandFailure("\(path): no peer's sweep in it") }
            return found
        }
    }
}
