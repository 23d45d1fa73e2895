import Foundation
import LoupeModels
import LoupeRetrieval
import LoupeStore

extension RetrievalService {
    package struct Evaluation: Sendable, Codable {
        package var retriever: Retriever
        package var queries: Int
        package var mean: RetrievalMetrics.Scores
        package var perQuery: [String: RetrievalMetrics.Scores]
    }

    /// Runs every query at depth `depth`, chunks rolled up to documents (a document scores its
    /// best chunk), and scores the run against `qrels` with trec_eval's conventions.
    package func evaluate(
        queries: [(id: String, text: String)], qrels: [String: [String: Int]], options: Options,
        reporter: JobReporter = .detached()
    ) throws -> Evaluation {
        var options = options
        options.k = max(options.depth, 100)
        let context = try context(for: options)
        var perQuery: [String: RetrievalMetrics.Scores] = [:]
        for (index, query) in queries.enumerated() {
            try reporter.checkCancellation()
            if index % 16 == 0 {
                reporter.report(JobProgress(completed: Double(index), total: Double(queries.count), detail: query.id))
            }
            var best: [String: Double] = [:]
            for hit in try rank(query.text, options: options, context: context, details: false) {
                best[hit.documentID] = max(best[hit.documentID] ?? -.infinity, hit.fused.score)
            }
            guard let judged = qrels[query.id] else { continue }
            perQuery[query.id] = RetrievalMetrics.evaluate(run: best.map { ($0.key, $0.value) }, qrels: judged)
        }
        let judgedQueries = queries.map(\.id).filter { qrels[$0] != nil }
        return Evaluation(
            retriever: options.retriever, queries: judgedQueries.count,
            mean: RetrievalMetrics.mean(perQuery, queries: judgedQueries), perQuery: perQuery)
    }
}
