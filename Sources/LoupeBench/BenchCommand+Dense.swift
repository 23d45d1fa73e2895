import ArgumentParser
import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeProfiling
import LoupeRetrieval
import LoupeTensor

extension BenchCommand {
    /// `loupe bench dense`: MiniLM dense retrieval on Cranfield in fp32 and in int8, side by side.
    struct Dense: LoupeCommand {
        static let configuration = CommandConfiguration(
            commandName: "dense",
            abstract: "Dense retrieval on Cranfield with MiniLM in fp32 and int8: metrics and the difference.",
            discussion: """
                Embeds every document (title + text, cut at 256 tokens) and every query's text with \
                MiniLM at each precision, ranks the documents by exact cosine (top 100) and scores the \
                run against the qrels as `bench retrieval` does. Reports the embedding time, the \
                metrics per precision, int8 minus fp32, and the lowest cosine between a document's \
                int8 and fp32 embeddings: whether int8 keeps the quality it is used for.
                """
        )
        static var runsInsideTUI: Bool { false }

        @OptionGroup var global: GlobalOptions
        @Option(help: "Corpus JSONL.") var corpus = "sample-data/cranfield/corpus.jsonl"
        @Option(help: "Queries JSONL.") var queries = "sample-data/cranfield/queries.jsonl"
        @Option(help: "Qrels (TREC).") var qrels = "sample-data/cranfield/qrels.trec"
        @Flag(help: "Print JSON.") var json = false
        @Option(
            help:
                "The widest kernel of the int8 linear layers (amx: AMX tiles; vnni: AVX-512 VNNI; avx2: AVX2, products in int16; portable; default the widest this CPU has), to compare them on one machine."
        )
        var int8Kernel: QuantizedLinear.Form?
        @Option(
            help:
                "With int8: the widest form of the attention (amx: bf16 on AMX tiles; avx512: bf16 on AVX-512 BF16; fp32; default the widest this CPU has), to compare them on one machine."
        )
        var int8Attention: LoupeTensor.Kernels.AttentionForm?

        struct Run: Encodable {
            var precision: String
            var embedSeconds: Double
            var ndcgAt10: Double
            var mapAt100: Double
            var recallAt100: Double
            var mrr: Double
        }

        struct Result: Encodable {
            var documents: Int
            var queries: Int
            var runs: [Run]
            var ndcgAt10Difference: Double
            var lowestDocumentCosine: Double
        }

        func run(in context: CommandContext) throws {
            let restore = BenchCommand.narrowInt8Forms(kernel: int8Kernel, attention: int8Attention)
            defer { restore() }
            let read = BenchCommand.readInput
            let documents = try CorpusReader.jsonl(read(corpus), file: corpus, strict: true).documents
            let queryList = try CorpusReader.jsonl(read(queries), file: queries, strict: true).documents
            let judgments = try Qrels.parse(read(qrels), file: qrels).judgments
            // A query's text alone, as `bench retrieval` reads it.
            let queryTexts = queryList.map(\.text)
            var runs: [Run] = []
            var documentVectors: [Precision: [[Float]]] = [:]
            for precision in [Precision.fp32, .int8] {
                let embedder = try context.session.models.miniLM(precision: precision)
                context.reporter.report(
                    JobProgress(
                        completed: 0, total: nil, detail: "embedding \(documents.count) documents, \(precision)"))
                var watch = Stopwatch()
                let vectors = embedder.embed(documents.map(\.body)).map(\.vector)
                let embedSeconds = watch.lap()
                documentVectors[precision] = vectors
                let queryVectors = embedder.embed(queryTexts).map(\.vector)
                var perQuery: [String: RetrievalMetrics.Scores] = [:]
                for (query, vector) in zip(queryList, queryVectors) {
                    // Unit vectors: the dot product is the cosine. TopK keeps positive scores only, so
                    // rank by 1 + cosine.
                    let scores = vectors.map { Double(1 + SentenceEmbedder.cosine($0, vector)) }
                    let run = TopK.select(scores, k: 100).map { (documents[$0.document].id, $0.score - 1) }
                    perQuery[query.id] = RetrievalMetrics.evaluate(run: run, qrels: judgments[query.id] ?? [:])
                }
                let mean = RetrievalMetrics.mean(perQuery, queries: Array(judgments.keys))
                runs.append(
                    Run(
                        precision: precision.rawValue, embedSeconds: embedSeconds, ndcgAt10: mean.ndcg[10] ?? 0,
                        mapAt100: mean.averagePrecision, recallAt100: mean.recall[100] ?? 0, mrr: mean.reciprocalRank))
            }
            let lowest =
                zip(documentVectors[.fp32] ?? [], documentVectors[.int8] ?? []).map {
                    Double(SentenceEmbedder.cosine($0, $1))
                }.min() ?? 0
            let result = Result(
                documents: documents.count, queries: queryList.count, runs: runs,
                ndcgAt10Difference: runs[1].ndcgAt10 - runs[0].ndcgAt10, lowestDocumentCosine: lowest)
            if json {
                context.print(try Formatting.json(result))
                return
            }
            context.print(
                "MiniLM dense retrieval on \(documents.count) documents, \(queryList.count) queries (exact cosine, top 100)"
            )
            for run in runs {
                context.print(
                    String(
                        format: "  %@  embed %.1f s   nDCG@10 %.4f  MAP@100 %.4f  R@100 %.4f  MRR %.4f",
                        run.precision, run.embedSeconds, run.ndcgAt10, run.mapAt100, run.recallAt100, run.mrr))
            }
            context.print(
                String(
                    format:
                        "  int8 − fp32: nDCG@10 %+.4f; lowest cosine between a document's int8 and fp32 embeddings %.5f",
                    result.ndcgAt10Difference, lowest))
        }
    }
}
