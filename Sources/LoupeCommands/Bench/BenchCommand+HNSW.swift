import ArgumentParser
import Foundation
import LoupeKit
import LoupeRetrieval

extension BenchCommand {
    struct HNSW: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "hnsw",
            abstract:
                "HNSW build time, memory, and single-thread recall@10 / queries per second over an efSearch sweep.",
            discussion: """
                Vectors and queries are raw little-endian Float32 files (rows of --dimensions), normalised \
                here; the ground truth is exact cosine (one sgemm per query). scripts/bench/hnsw.sh writes \
                the 100k × 384 clustered set and runs hnswlib on the same files.
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Vectors, raw Float32.") var vectors: String
        @Option(help: "Queries, raw Float32.") var queries: String
        @Option(help: "Dimensions of a row.") var dimensions = 384
        @Option(help: "M.") var m = 16
        @Option(help: "efConstruction.") var efConstruction = 200
        @Option(help: "efSearch values to sweep, comma-separated.") var ef = "10,16,24,32,48,64,96,128"
        @Flag(help: "Print JSON.") var json = false

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
            var sweep: [Point]
        }

        static func load(_ path: String, dimensions: Int) throws -> [[Float]] {
            guard let data = FileManager.default.contents(atPath: path), data.count % (4 * dimensions) == 0 else {
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
            let base = try Self.load(vectors, dimensions: dimensions)
            let probes = try Self.load(queries, dimensions: dimensions)
            let sweep = ef.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            var flat = FlatIndex(dimensions: dimensions)
            for vector in base { flat.add(vector) }
            let truth = probes.map { Set(flat.search($0, k: 10).map(\.index)) }
            var index = HNSWIndex(dimensions: dimensions, parameters: .init(m: m, efConstruction: efConstruction))
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
            var points: [Point] = []
            for value in sweep {
                var best = Double.infinity
                var found = 0
                for _ in 0..<3 {
                    found = 0
                    start = DispatchTime.now().uptimeNanoseconds
                    for (query, expected) in zip(probes, truth) {
                        found += index.search(query, k: 10, ef: value).filter { expected.contains($0.index) }.count
                    }
                    best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                }
                points.append(
                    Point(
                        ef: value, recallAt10: Double(found) / Double(probes.count * 10),
                        queriesPerSecond: Double(probes.count) / best))
            }
            let result = Result(
                vectors: base.count, queries: probes.count, dimensions: dimensions, buildSeconds: buildSeconds,
                graphBytes: index.graphBytes, rawVectorBytes: base.count * dimensions * 4, sweep: points)
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
            for point in points {
                context.print(
                    String(
                        format: "  ef %4d  recall@10 %.4f  %8.0f queries/s", point.ef, point.recallAt10,
                        point.queriesPerSecond))
            }
        }
    }
}
