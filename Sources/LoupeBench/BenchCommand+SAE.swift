import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeProfiling
import LoupeStore
import LoupeTensor

extension BenchCommand {
    struct SAE: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "sae",
            abstract: "Activation collection and SAE training throughput (tokens/s) on this machine.",
            discussion: """
                In a scratch workspace: the Cranfield corpus is ingested (no embeddings), MiniLM's \
                residual stream after --layer is collected for --tokens tokens, then a TopK SAE (d 384, \
                --width, --k) takes --steps Adam steps of --batch tokens on those activations. \
                scripts/bench/sae.sh runs the same step in PyTorch (CPU) and prints the ratio.
                """)

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Corpus JSONL.") var corpus = "sample-data/cranfield/corpus.jsonl"
        @Option(help: "Layer.") var layer = 3
        @Option(help: "Tokens to collect.") var tokens = 20_000
        @Option(help: "Latents.") var width = 3072
        @Option(help: "TopK's k.") var k = 32
        @Option(help: "Tokens per step.") var batch = 1024
        @Option(help: "Timed steps (after 3 warm-up steps).") var steps = 20

        struct Result: Encodable {
            var collectTokensPerSecond: Double
            var collectedTokens: Int
            var trainTokensPerSecond: Double
            var trainSecondsPerStep: Double
            var width: Int
            var k: Int
            var batch: Int
            var inputs: Int
            var threads: Int
        }

        func run(in context: CommandContext) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "loupe-bench-sae-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let workspace = try Workspace(path: directory + "/bench.sqlite")
            _ = try RetrievalService(workspace: workspace, models: context.session.models).ingest(
                [corpus], embed: false)
            let service = SAEService(workspace: workspace, models: context.session.models)
            let collected = try service.collect(layer: layer, tokens: tokens)
            let (rows, dimensions, values) = try service.activations(set: collected.set)
            Memory.keepLargeAllocationsInTheHeap()
            var trainer = SAETrainer(
                sae: SparseAutoencoder(
                    inputs: dimensions, width: width, activation: .topK(k: k, auxK: 0, auxCoefficient: 0)),
                settings: SAETrainer.Settings())
            var order = SplitMix64(seed: 7)
            func batchValues() -> [Float] {
                var out = [Float](repeating: 0, count: batch * dimensions)
                for r in 0..<batch {
                    let source = Int(order.next() % UInt64(rows))
                    for d in 0..<dimensions { out[r * dimensions + d] = values[source * dimensions + d] }
                }
                return out
            }
            for _ in 0..<3 { _ = trainer.train(batchValues(), rows: batch) }
            let prepared = (0..<steps).map { _ in batchValues() }
            let seconds = Stopwatch.seconds { for values in prepared { _ = trainer.train(values, rows: batch) } }
            let result = Result(
                collectTokensPerSecond: Double(collected.rows) / max(collected.seconds, 1e-9),
                collectedTokens: collected.rows, trainTokensPerSecond: Double(steps * batch) / seconds,
                trainSecondsPerStep: seconds / Double(steps), width: width, k: k, batch: batch, inputs: dimensions,
                threads: ProcessInfo.processInfo.activeProcessorCount)
            if json { return context.print(try Formatting.json(result)) }
            context.print(
                String(
                    format: "collect  layer %d: %d tokens at %.0f tokens/s", layer, collected.rows,
                    result.collectTokensPerSecond))
            context.print(
                String(
                    format: "train    TopK d %d × %d, k %d, batch %d: %.1f ms/step, %.0f tokens/s", dimensions, width,
                    k,
                    batch, result.trainSecondsPerStep * 1e3, result.trainTokensPerSecond))
        }
    }
}
