import Foundation
import LoupeKit
import LoupeModels
import LoupeRetrieval
import LoupeStore
import Testing

/// The Retrieval panel's port on the Cranfield collection in sample-data, ingested without
/// embeddings (BM25 needs none); the tests that need dense vectors embed a slice of it with
/// MiniLM when it is installed.
@Suite struct RetrievalBrowserTests {
    static let corpus = KitFixtures.path("sample-data/cranfield/corpus.jsonl")

    static var bm25: RetrievalService.Options {
        var options = RetrievalService.Options()
        options.retriever = .bm25
        return options
    }

    /// A workspace holding `corpus` (the whole collection unless given), without embeddings.
    static func ingested(_ corpus: String = corpus) throws -> (Workspace, RetrievalBrowser) {
        let workspace = try KitFixtures.workspace("retrieval")
        _ = try RetrievalService(workspace: workspace, models: KitFixtures.models).ingest([corpus], embed: false)
        return (workspace, RetrievalBrowser(database: workspace, models: KitFixtures.models))
    }

    /// The first `count` documents of the collection, in a file of their own.
    static func slice(_ count: Int) throws -> String {
        let lines = try String(contentsOfFile: corpus, encoding: .utf8).split(separator: "\n").prefix(count)
        let path = try KitFixtures.temporaryDirectory("cranfield") + "/slice.jsonl"
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Loads the judgments and their queries' texts as `loupe qrels load --queries` does.
    static func loadQrels(into workspace: Workspace) throws -> Qrels {
        let qrels = try Qrels.parse(
            String(contentsOfFile: KitFixtures.path("sample-data/cranfield/qrels.trec"), encoding: .utf8),
            file: "qrels.trec")
        try workspace.corpus.replaceQrels(source: "qrels.trec", judgments: qrels.judgments)
        let queries = try CorpusReader.jsonl(
            String(contentsOfFile: KitFixtures.path("sample-data/cranfield/queries.jsonl"), encoding: .utf8),
            file: "queries.jsonl", strict: true
        ).documents
        try workspace.corpus.replaceQrelsQueries(source: "qrels.trec", queries: queries.map { ($0.id, $0.body) })
        return qrels
    }

    @Test func bm25RanksADocumentWithTheQueryTermsFirst() throws {
        let (_, browser) = try Self.ingested()
        let result = try browser.search(RetrievalRequest("slipstream wing", options: Self.bm25))
        #expect(result.hits.count == 10)
        let first = try #require(result.hits.first)
        #expect(first.text.contains("slipstream") && first.text.contains("wing"))
        #expect(first.matchedTerms.contains("slipstream") && first.matchedTerms.contains("wing"))
        #expect(first.bm25?.rank == 1 && first.dense == nil)
        #expect(result.hits.map(\.rank) == Array(1...10))
        // BM25's own top k is the ranking itself; dense has nothing to say without embeddings.
        #expect(result.bm25Top.map(\.chunkID) == result.hits.map(\.chunkID))
        #expect(result.denseTop.isEmpty)
    }

    @Test func searchingWritesNoRetrievalRecord() throws {
        let (workspace, browser) = try Self.ingested()
        let service = RetrievalService(workspace: workspace, models: KitFixtures.models)
        let before = try service.records().count
        _ = try browser.search(RetrievalRequest("boundary layer transition", options: Self.bm25))
        _ = try browser.search(RetrievalRequest("heat transfer", options: Self.bm25))
        #expect(try service.records().count == before)
        #expect(try workspace.corpus.retrievalRecords().isEmpty)
    }

    @Test func aJudgedQueryComesWithItsJudgmentsAndMetrics() throws {
        let (workspace, browser) = try Self.ingested()
        let plain = try browser.search(
            RetrievalRequest(
                "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft .",
                options: Self.bm25))
        #expect(plain.judged == nil)

        let qrels = try Self.loadQrels(into: workspace)
        let result = try browser.search(
            RetrievalRequest(
                "What similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft?",
                options: Self.bm25))
        let judged = try #require(result.judged)
        #expect(judged.source == "qrels.trec" && judged.id == "1")
        #expect(judged.judgments == qrels.judgments["1"])
        #expect(judged.scores.averagePrecision > 0)
        #expect(try browser.search(RetrievalRequest("slipstream wing", options: Self.bm25)).judged == nil)
    }

    @Test func aDocumentIsFoundByItsIDAndAnUnknownIDIsNil() throws {
        let (_, browser) = try Self.ingested()
        let document = try #require(try browser.document("1"))
        #expect(document.title == "experimental investigation of the aerodynamics of a wing in a slipstream .")
        #expect(document.body.contains("propeller slipstream"))
        #expect(try browser.document("no-such-document") == nil)
    }

    @Test func anEmptyWorkspaceSaysToIngestFirst() throws {
        let browser = RetrievalBrowser(database: try KitFixtures.workspace("retrieval"), models: KitFixtures.models)
        let error = #expect(throws: RetrievalError.self) {
            try browser.search(RetrievalRequest("wing", options: Self.bm25))
        }
        #expect(error?.description.contains("run loupe ingest") == true)
    }

    @Test(arguments: [RetrievalService.Retriever.hybrid, .dense])
    func denseRetrieversOnAWorkspaceWithoutEmbeddingsSayToIngestAgain(_ retriever: RetrievalService.Retriever) throws {
        let (_, browser) = try Self.ingested(try Self.slice(20))
        var options = Self.bm25
        options.retriever = retriever
        let error = #expect(throws: RetrievalError.self) {
            try browser.search(RetrievalRequest("wing", options: options))
        }
        #expect(error?.description.contains("20 chunks have no embedding") == true)
    }

    /// MMR re-ranks by the chunks' embeddings: on a workspace without them a panel query says
    /// so, rather than embedding the corpus from a read.
    @Test func mmrOnAWorkspaceWithoutEmbeddingsSaysToIngestAgainAndWritesNothing() throws {
        let (workspace, browser) = try Self.ingested(try Self.slice(20))
        var options = Self.bm25
        options.mmr = true
        let error = #expect(throws: RetrievalError.self) {
            try browser.search(RetrievalRequest("wing", options: options))
        }
        #expect(error?.description.contains("no embedding") == true)
        #expect(try workspace.corpus.corpusCounts(model: RetrievalService.embeddingModel(of: workspace)).embedded == 0)
    }

    @Test(.enabled(if: KitFixtures.models.hasMiniLM, "needs MiniLM (scripts/fetch-minilm)"))
    func mmrReranksBM25sCandidatesForDiversity() throws {
        let slice = try Self.slice(80)
        let workspace = try KitFixtures.workspace("retrieval")
        let service = RetrievalService(workspace: workspace, models: KitFixtures.models)
        #expect(try service.ingest([slice], embed: true).embedded == 80)
        let browser = RetrievalBrowser(database: workspace, models: KitFixtures.models)

        var options = Self.bm25
        let plain = try browser.search(RetrievalRequest("lift of a wing in a slipstream", options: options))
        options.mmr = true
        let diverse = try browser.search(RetrievalRequest("lift of a wing in a slipstream", options: options))
        #expect(diverse.hits.count == 10)
        #expect(Set(diverse.hits.map(\.chunkID)).count == 10)
        // MMR picks among BM25's first max(3k, 30) candidates, in another order.
        #expect(diverse.hits.allSatisfy { ($0.bm25?.rank ?? .max) <= 30 })
        #expect(diverse.hits.map(\.chunkID) != plain.hits.map(\.chunkID))
        // BM25's own top k is the same with or without MMR; with MMR's vectors loaded, dense's is there too.
        #expect(diverse.bm25Top.map(\.chunkID) == plain.bm25Top.map(\.chunkID) && diverse.denseTop.count == 10)
        #expect(try service.records().isEmpty)
    }

    /// With MMR on, a judged query's metrics are those of the MMR'd list on screen, as trec_eval
    /// scores that list in its order: not of the ranking before MMR, and not of a deeper MMR run
    /// whose first ten differ from the ten shown. The ranks the missed view gives continue it.
    @Test(.enabled(if: KitFixtures.models.hasMiniLM, "needs MiniLM (scripts/fetch-minilm)"))
    func mmrsJudgedMetricsAreThoseOfTheListShown() throws {
        // Cranfield query 1 has 19 of its 28 relevant documents among the first 200.
        let slice = try Self.slice(200)
        let workspace = try KitFixtures.workspace("retrieval")
        let service = RetrievalService(workspace: workspace, models: KitFixtures.models)
        #expect(try service.ingest([slice], embed: true).embedded == 200)
        _ = try Self.loadQrels(into: workspace)
        let browser = RetrievalBrowser(database: workspace, models: KitFixtures.models)
        let query =
            "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft ."
        var options = Self.bm25
        let plain = try #require(try browser.search(RetrievalRequest(query, options: options)).judged)
        #expect(plain.mmrLambda == nil)
        options.mmr = true
        let result = try browser.search(RetrievalRequest(query, options: options))
        let judged = try #require(result.judged)
        #expect(judged.mmrLambda == options.mmrLambda)
        var shown: [String] = []
        for hit in result.hits where !shown.contains(hit.documentID) { shown.append(hit.documentID) }
        try #require(shown.count == 10)
        // MMR changed the list, so a figure of the list before MMR would differ.
        #expect(shown != (0..<10).compactMap { rank in plain.ranks.first { $0.value == rank + 1 }?.key })
        // trec_eval orders a run by score: the list in its order is scored by its rank.
        let expected = RetrievalMetrics.evaluate(
            run: shown.enumerated().map { ($0.element, Double(shown.count - $0.offset)) }, qrels: judged.judgments)
        #expect(abs((judged.scores.ndcg[10] ?? -1) - (expected.ndcg[10] ?? -2)) < 1e-12)
        #expect(judged.scores.reciprocalRank == expected.reciprocalRank)
        for (index, document) in shown.enumerated() { #expect(judged.ranks[document] == index + 1) }
        // Without MMR the same holds for BM25's own list, which is what byRetriever compares.
        #expect(judged.byRetriever["bm25"]?.ndcg[10] == plain.scores.ndcg[10])
    }

    /// `ingest --precision int8` embeds the corpus in int8 and the workspace remembers it: the
    /// vectors are stored under the int8 name, queries are embedded in int8 too (the top hit's
    /// dense score is the cosine of the int8 query with its stored vector), an ingest without the
    /// option keeps it, and ingesting at fp32 again embeds every chunk again.
    @Test(.enabled(if: KitFixtures.models.hasMiniLM, "needs MiniLM (scripts/fetch-minilm)"))
    func theCorpusPrecisionIsRememberedAndQueriesFollowIt() throws {
        let slice = try Self.slice(40)
        let workspace = try KitFixtures.workspace("retrieval")
        let service = RetrievalService(workspace: workspace, models: KitFixtures.models)
        #expect(try service.precision() == .fp32)
        #expect(try service.ingest([slice], precision: .int8).embedded == 40)
        #expect(try service.precision() == .int8)
        #expect(try workspace.corpus.corpusCounts(model: "all-MiniLM-L6-v2 int8").embedded == 40)
        #expect(try workspace.corpus.corpusCounts(model: "all-MiniLM-L6-v2").embedded == 0)

        var options = RetrievalService.Options()
        options.retriever = .dense
        let query = "lift of a wing in a slipstream"
        let browser = RetrievalBrowser(database: workspace, models: KitFixtures.models)
        let int8 = try browser.search(RetrievalRequest(query, options: options)).hits
        let top = try #require(int8.first)
        let queryVector = try KitFixtures.models.miniLM(precision: .int8).embed([query])[0].vector
        let stored = try workspace.corpus.embeddings(model: "all-MiniLM-L6-v2 int8", dimensions: 384)
        let chunkVector = try #require(stored.first { $0.id == top.chunkID }?.vector)
        let cosine = zip(queryVector, chunkVector).reduce(Float(0)) { $0 + $1.0 * $1.1 }
        #expect(abs(Double(cosine) - (top.dense?.score ?? 0)) < 1e-4)

        #expect(try service.ingest([slice]).embedded == 0)
        #expect(try service.precision() == .int8)
        #expect(try service.ingest([slice], precision: .fp32).embedded == 40)
        #expect(try workspace.corpus.corpusCounts(model: "all-MiniLM-L6-v2").embedded == 40)
        let fp32 = try browser.search(RetrievalRequest(query, options: options)).hits
        // int8's cosines are within about 0.002 of fp32's: near ties may swap, no more. The first
        // three are the same chunks, and four of the first five.
        #expect(Set(fp32.prefix(3).map(\.chunkID)) == Set(int8.prefix(3).map(\.chunkID)))
        #expect(Set(fp32.prefix(5).map(\.chunkID)).intersection(int8.prefix(5).map(\.chunkID)).count >= 4)
    }
}

@Suite struct HitTitleTests {
    private func hit(title: String, text: String) -> RetrievalService.Hit {
        RetrievalService.Hit(
            rank: 1, chunkID: 1, documentID: "d", title: title, ordinal: 0, startByte: 0, endByte: text.utf8.count,
            text: text, bm25: nil, dense: nil, fused: RetrievalService.Placement(score: 1, rank: 1), matchedTerms: [],
            contributions: [])
    }

    /// A Markdown chunk that starts a section is listed by its heading and its document; others
    /// by the document's title.
    @Test func aChunkThatStartsASectionIsTitledByItsHeading() {
        #expect(hit(title: "Loupe", text: "## Install\nRun scripts/setup.").shownTitle == "Install · Loupe")
        #expect(hit(title: "Loupe", text: "\n### Keys  \nb marks").shownTitle == "Keys · Loupe")
        #expect(hit(title: "Loupe", text: "# Loupe\nThe workbench.").shownTitle == "Loupe")
        #expect(hit(title: "Loupe", text: "#hashtag is not a heading").shownTitle == "Loupe")
        #expect(hit(title: "Loupe", text: "Plain paragraph.").shownTitle == "Loupe")
        #expect(hit(title: "", text: "## Only a heading\ntext").shownTitle == "Only a heading")
        #expect(hit(title: "", text: "no title").shownTitle == "no title")
    }
}
