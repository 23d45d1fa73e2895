import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeRetrieval

extension BenchCommand {
    /// Reads a benchmark's input file, saying where to run from when it is missing.
    static func readInput(_ path: String) throws -> String {
        do {
            return try TextFile.read(path)
        } catch {
            throw CommandFailure("\(error) (run from the checkout, or pass the path)")
        }
    }

    struct Retrieval: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "retrieval",
            abstract: "BM25 on a JSONL corpus (Cranfield by default): index time, single-thread queries/s, metrics.",
            discussion: """
                Tokenisation as the peers were measured with (lower-case, split on non-alphanumerics, the \
                33-word stop list; --stem for Porter), k1 1.2, b 0.75, documents as title + text, \
                queries as their text alone (as the peers read them; --query-title adds a query's title), \
                top 100 per query (every document scored). --run-file writes the run in TREC format so \
                pytrec_eval can score the same ranking (scripts/bench/retrieval.sh does, beside bm25s and \
                rank_bm25). index_bytes is the index as the workspace stores it.
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Corpus JSONL.") var corpus = "sample-data/cranfield/corpus.jsonl"
        @Option(help: "Queries JSONL.") var queries = "sample-data/cranfield/queries.jsonl"
        @Option(help: "Qrels (TREC).") var qrels = "sample-data/cranfield/qrels.trec"
        @Flag(help: "Porter stemming.") var stem = false
        @Option(help: "Passes over the queries; the best is kept.") var repeats = 5
        @Option(help: "Write the run (TREC format) here.") var runFile: String?
        @Flag(help: "Prefix each query's text with its title, when the queries file has titles.") var queryTitle = false
        @Flag(help: "Print JSON.") var json = false

        struct Result: Encodable {
            var documents: Int
            var queries: Int
            var stem: Bool
            var tokenizeSeconds: Double
            var indexSeconds: Double
            var indexBytes: Int
            /// The impacts queries read, held compact, and what 12 bytes a posting would be.
            var impactBytes: Int
            var wideImpactBytes: Int
            var queryTitle: Bool
            var queriesPerSecond: Double
            var ndcgAt10: Double
            var mapAt100: Double
            var recallAt100: Double
            var mrr: Double
            var precisionAt10: Double
        }

        func run(in context: CommandContext) throws {
            let read = BenchCommand.readInput
            let documents = try CorpusReader.jsonl(read(corpus), file: corpus, strict: true).documents
            let queryList = try CorpusReader.jsonl(read(queries), file: queries, strict: true).documents
            let judgments = try Qrels.parse(read(qrels), file: qrels).judgments
            let tokenizer = RetrievalTokenizer(stem: stem)
            var start = DispatchTime.now().uptimeNanoseconds
            // Title + " " + text, as the peers index it (the body joins them with a blank line).
            let terms = documents.map { tokenizer.terms($0.body) }
            // A query's text alone unless asked (its body is title, blank line, text).
            let queryTerms = queryList.map { tokenizer.terms(queryTitle ? $0.body : $0.text) }
            let tokenizeSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            start = DispatchTime.now().uptimeNanoseconds
            let index = BM25Index(documents: terms)
            let indexSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            var best = Double.infinity
            var runs: [[(document: Int, score: Double)]] = []
            for _ in 0..<max(1, repeats) {
                start = DispatchTime.now().uptimeNanoseconds
                runs = queryTerms.map { index.search($0, k: 100) }
                best = min(best, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            }
            var perQuery: [String: RetrievalMetrics.Scores] = [:]
            var lines: [String] = []
            for (query, hits) in zip(queryList, runs) {
                let run = hits.map { (documents[$0.document].id, $0.score) }
                perQuery[query.id] = RetrievalMetrics.evaluate(run: run, qrels: judgments[query.id] ?? [:])
                for (rank, hit) in run.enumerated() {
                    lines.append("\(query.id) Q0 \(hit.0) \(rank + 1) \(String(format: "%.9f", hit.1)) loupe")
                }
            }
            if let path = runFile {
                try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
            }
            let mean = RetrievalMetrics.mean(perQuery, queries: Array(judgments.keys))
            let result = Result(
                documents: documents.count, queries: queryList.count, stem: stem, tokenizeSeconds: tokenizeSeconds,
                indexSeconds: indexSeconds, indexBytes: index.serialized().count, impactBytes: index.impactBytes.held,
                wideImpactBytes: index.impactBytes.wide, queryTitle: queryTitle,
                queriesPerSecond: Double(queryList.count) / best,
                ndcgAt10: mean.ndcg[10] ?? 0, mapAt100: mean.averagePrecision, recallAt100: mean.recall[100] ?? 0,
                mrr: mean.reciprocalRank, precisionAt10: mean.precision[10] ?? 0)
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                "BM25\(stem ? " (Porter)" : "")"
                    + String(
                        format:
                            " on %d documents: tokenise %.3f s, index %.3f s (%.1f MB), %.0f queries/s (single thread, top 100)",
                        documents.count, tokenizeSeconds, indexSeconds, Double(result.indexBytes) / 1e6,
                        result.queriesPerSecond))
            context.print(
                String(
                    format: "nDCG@10 %.4f  MAP@100 %.4f  R@100 %.4f  MRR %.4f  P@10 %.4f", result.ndcgAt10,
                    result.mapAt100,
                    result.recallAt100, result.mrr, result.precisionAt10))
        }
    }
}
