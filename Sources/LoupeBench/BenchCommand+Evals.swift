import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeEvals
import LoupeKit
import LoupeProfiling
import LoupeStore

extension BenchCommand {
    struct Evals: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "evals",
            abstract: "The eval runner's own cost per item, and the statistics' time on 10,000 items × 5 epochs.",
            discussion: """
                Runner overhead: a suite of --items items whose target answers at once (its first \
                target), scored by exact, contains and token F1, run in a fresh workspace; every answer \
                is stored in its own transaction as a real run does. The same on the Cranfield BM25 \
                suite (sample-data/evals/cranfield-bm25.yaml) with the target's own time (each answer's \
                latency) taken out. Statistics: a run's summary (Wilson or clustered-t, 2,000-resample \
                bootstrap, pass@k) and a paired comparison of two runs, on --stat-items items × 5 epochs.
                """)

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false
        @Option(help: "Items of the instant-target suite.") var items = 2000
        @Option(help: "Items of the statistics benchmark.") var statItems = 10_000
        @Option(help: "The retrieval suite timed with its target.") var suite = "sample-data/evals/cranfield-bm25.yaml"
        @Option(help: "The corpus that suite searches.") var corpus = "sample-data/cranfield/corpus.jsonl"

        struct Result: Encodable {
            var instantItems: Int
            var instantSeconds: Double
            var runnerOverheadMsPerItem: Double
            var instantSetupSeconds: Double
            var instantSummarySeconds: Double
            var suiteItems: Int?
            var suiteSeconds: Double?
            var suiteTargetSeconds: Double?
            var suiteOverheadMsPerItem: Double?
            var suiteSetupSeconds: Double?
            var suiteSummarySeconds: Double?
            var statisticsItems: Int
            var statisticsEpochs: Int
            var summarySeconds: Double
            var comparisonSeconds: Double
            var targets: [String: Double]
        }

        func run(in context: CommandContext) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "loupe-bench-evals-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let workspace = try Workspace(path: directory + "/bench.sqlite")

            // 1. The runner alone.
            var lines: [String] = []
            for index in 0..<items {
                lines.append(
                    "{\"id\": \"i\(index)\", \"input\": \"question \(index) about heated wings\", \"target\": \"answer \(index % 97) for the wing\"}"
                )
            }
            try (lines.joined(separator: "\n") + "\n").write(
                toFile: directory + "/items.jsonl", atomically: true, encoding: .utf8)
            try """
            name: runner-overhead
            dataset: items.jsonl
            target: {model: {provider: openai, base_url: "http://127.0.0.1:9/v1", model: none}}
            scorers: [exact, contains, {token_f1: {threshold: 0.5}}]
            """.write(toFile: directory + "/suite.yaml", atomically: true, encoding: .utf8)
            var service = EvalService(workspace: workspace, models: context.session.models)
            service.instantTarget = true
            let loaded = try service.load(directory + "/suite.yaml")
            let outcome = try service.run(loaded)
            // The answer loop alone: what each answer costs the runner (the instant target takes no
            // time); setup and the statistics after it are reported apart.
            let instant = outcome.loopSeconds
            precondition(outcome.answered == items)

            // 2. A real suite: Cranfield BM25, the target's own time taken out.
            var suiteResult: (items: Int, seconds: Double, target: Double, setup: Double, summary: Double)?
            if FileManager.default.fileExists(atPath: suite), FileManager.default.fileExists(atPath: corpus) {
                let retrieval = RetrievalService(workspace: workspace, models: context.session.models)
                _ = try retrieval.ingest([corpus], embed: false)
                let real = EvalService(workspace: workspace, models: context.session.models)
                let loadedSuite = try real.load(suite)
                _ = try retrieval.bm25(stem: false)  // the index is built once, before timing
                var fresh = EvalService.RunOptions()
                fresh.fresh = true
                let ran = try real.run(loadedSuite, options: fresh)
                let target = try workspace.evals.evalResults(run: ran.runID).compactMap(\.latencyMs).reduce(0, +) / 1e3
                suiteResult = (ran.answered, ran.loopSeconds, target, ran.setupSeconds, ran.summarySeconds)
            }

            // 3. Statistics on statItems × 5 epochs.
            let epochs = 5
            var generator = SplitMix64(seed: 42)
            func rows(_ skill: Double) -> [ScoredRow] {
                (0..<statItems).flatMap { item in
                    (1...epochs).map { epoch in
                        let draw = Double(generator.next() % 10_000) / 10_000
                        let pass = draw < skill + Double(item % 10) / 50
                        return ScoredRow(
                            itemID: "i\(item)", epoch: epoch, values: ["exact": pass ? 1 : 0, "f1": draw],
                            passed: ["exact": pass])
                    }
                }
            }
            let a = rows(0.5)
            let b = rows(0.52)
            var watch = Stopwatch()
            let summary = RunSummary(rows: a, scorers: ["exact", "f1"])
            let summarySeconds = watch.lap()
            let comparison = RunComparison(a: a, b: b, scorers: ["exact", "f1"])
            let comparisonSeconds = watch.lap()
            precondition(summary.items == statItems && comparison.metrics.count == 2)

            let result = Result(
                instantItems: items, instantSeconds: instant, runnerOverheadMsPerItem: instant / Double(items) * 1e3,
                instantSetupSeconds: outcome.setupSeconds, instantSummarySeconds: outcome.summarySeconds,
                suiteItems: suiteResult?.items, suiteSeconds: suiteResult?.seconds,
                suiteTargetSeconds: suiteResult?.target,
                suiteOverheadMsPerItem: suiteResult.map { ($0.seconds - $0.target) / Double($0.items) * 1e3 },
                suiteSetupSeconds: suiteResult?.setup, suiteSummarySeconds: suiteResult?.summary,
                statisticsItems: statItems, statisticsEpochs: epochs, summarySeconds: summarySeconds,
                comparisonSeconds: comparisonSeconds, targets: ["runner_overhead_ms_per_item": 1])
            if json { return context.print(try Formatting.json(result)) }
            context.print(
                String(
                    format: "runner, instant target   %d answers in %.3f s: %.3f ms each (target ≤ 1 ms)", items,
                    instant, result.runnerOverheadMsPerItem))
            context.print(
                String(
                    format: "                         setup %.3f s, statistics after the run %.3f s",
                    outcome.setupSeconds, outcome.summarySeconds))
            if let suiteResult, let overhead = result.suiteOverheadMsPerItem {
                context.print(
                    String(
                        format:
                            "cranfield-bm25 suite     %d answers in %.3f s, the target's own %.3f s: %.3f ms each beyond it",
                        suiteResult.items, suiteResult.seconds, suiteResult.target, overhead))
                context.print(
                    String(
                        format:
                            "                         setup %.3f s (BM25 index, corpus), statistics after the run %.3f s",
                        suiteResult.setup, suiteResult.summary))
            }
            context.print(
                String(
                    format: "statistics %d items × %d epochs: summary %.3f s, paired comparison %.3f s", statItems,
                    epochs, summarySeconds, comparisonSeconds))
        }
    }
}
