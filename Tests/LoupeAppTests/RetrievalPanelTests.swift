import LoupeApp
import LoupeKit
import LoupeRetrieval
import LoupeStore
import LoupeTUI
import LoupeTestSupport
import Testing

@Suite struct RetrievalPanelTests {
    static func hit(
        _ rank: Int, _ id: String, bm25: Int?, dense: Int?, title: String, text: String, terms: [String]
    ) -> RetrievalService.Hit {
        RetrievalService.Hit(
            rank: rank, chunkID: Int64(rank), documentID: id, title: title, ordinal: 0, startByte: 0,
            endByte: text.utf8.count, text: text, bm25: bm25.map { .init(score: 10 - Double($0), rank: $0) },
            dense: dense.map { .init(score: 0.9 - Double($0) / 100, rank: $0) },
            fused: .init(score: 0.033 - Double(rank) / 1000, rank: rank), matchedTerms: terms,
            contributions: terms.map { .init(term: $0, termFrequency: 1, idf: 2.5, tfPart: 0.6) })
    }

    static let result = RetrievalResult(
        hits: [
            hit(
                1, "879", bm25: 1, dense: 2, title: "flutter model testing",
                text: "Flutter model testing at transonic speeds.", terms: ["flutter", "transonic"]),
            hit(
                2, "1337", bm25: 6, dense: 1, title: "sweep and flutter",
                text: "Effects of sweep on the flutter of wings.", terms: ["flutter"]),
            hit(
                3, "52", bm25: nil, dense: 3, title: "supersonic flutter", text: "Flutter at high supersonic speed.",
                terms: ["flutter"]),
            hit(
                4, "415", bm25: 2, dense: nil, title: "section shapes",
                text: "Section shapes for swept wings.\nSecond line \u{1B}[31mred", terms: ["swept"]),
        ],
        bm25Top: [
            hit(1, "879", bm25: 1, dense: nil, title: "flutter model testing", text: "", terms: []),
            hit(2, "415", bm25: 2, dense: nil, title: "section shapes", text: "", terms: []),
        ],
        denseTop: [
            hit(1, "1337", bm25: nil, dense: 1, title: "sweep and flutter", text: "", terms: []),
            hit(2, "879", bm25: nil, dense: 2, title: "flutter model testing", text: "", terms: []),
        ])

    private func panel(_ state: AppState) -> RetrievalPanel { state.panels[state.focusedPanel] as! RetrievalPanel }

    /// The search the keys asked for; records an issue (and returns nil) when they asked for none.
    private func search(in effects: [Effect], sourceLocation: SourceLocation = #_sourceLocation)
        -> RetrievalPanel.Search?
    {
        let searches = AppFixtures.requests(RetrievalPanel.Search.self, in: effects)
        if searches.count != 1 { Issue.record("expected one search, got \(effects)", sourceLocation: sourceLocation) }
        return searches.first
    }

    /// The panel after typing a query and getting `result` back.
    private func searched(width: Int = 160, height: Int = 48) throws -> AppState {
        var state = AppFixtures.state(width: width, height: height)
        AppFixtures.press([.character("2")], on: &state)
        AppFixtures.press([.character("i")], on: &state)
        for character in "flutter transonic" { AppFixtures.press([.character(character)], on: &state) }
        let asked = try #require(search(in: AppFixtures.press([.enter], on: &state)))
        #expect(asked.request.query == "flutter transonic")
        #expect(asked.request.options.retriever == .hybrid)
        _ = state.update(AppFixtures.answer(asked, Self.result))
        return state
    }

    @Test func judgedQueriesMarkRelevantHitsAndShowTheirMetrics() throws {
        var state = try searched()
        var judgedResult = Self.result
        var scores = RetrievalMetrics.Scores(averagePrecision: 0.5, reciprocalRank: 1)
        scores.ndcg[10] = 0.75
        scores.recall[100] = 0.5
        judgedResult.judged = JudgedQuery(
            source: "qrels.trec", id: "7", judgments: ["879": 2, "52": 0, "9": 1, "12": 2], scores: scores)
        var dense = scores
        dense.ndcg[10] = 0.9
        var hybrid = scores
        hybrid.ndcg[10] = 0.7
        judgedResult.judged?.byRetriever = ["bm25": scores, "dense": dense, "hybrid": hybrid]
        judgedResult.judged?.ranks = ["879": 1, "9": 31]
        judgedResult.judged?.titles = ["12": "a note on flutter", "9": "transonic flutter of swept wings"]
        let asked = try #require(search(in: AppFixtures.press([.character("m")], on: &state)))
        _ = state.update(AppFixtures.answer(asked, judgedResult))
        let frame = state.render()
        let text = frame.text()
        // The metrics with what the other retrievers score on this query (this is BM25 now).
        #expect(text.contains("q7 of qrels.trec · nDCG@10 0.750 (dense 0.900, hybrid 0.700)"))
        #expect(text.contains("2 of 3 relevant missed (v) · R@100 0.500 · RR 1.000"))
        // Which one was missed, not only how many: the most relevant, by id and title.
        #expect(text.contains("most relevant missed: ✓2 12 “a note on flutter” not in the top 100 · v v lists"))
        #expect(RetrievalPanel.relevance("879", judgedResult.judged) == "✓2")
        #expect(RetrievalPanel.relevance("52", judgedResult.judged) == "·")
        #expect(RetrievalPanel.relevance("415", judgedResult.judged) == "")
        #expect(RetrievalPanel.relevance("879", nil) == "")
        expectPanel(state, matchesGolden: "retrieval-judged-160x48")
        // v, v: the relevant documents the hits leave out, most relevant first, with their rank.
        AppFixtures.press([.character("v"), .character("v")], on: &state)
        let missed = state.render().text().split(separator: "\n")
        let twelve = try #require(missed.firstIndex { $0.contains("12") && $0.contains("> 100") })
        let nine = try #require(missed.firstIndex { $0.contains("31") && $0.contains("transonic flutter") })
        #expect(twelve < nine)
        #expect(missed.contains { $0.contains("a note on flutter") })
    }

    /// With MMR on, the judged line's figures are the MMR'd list's and say so; the retrievers'
    /// own figures, without MMR, come after them and are named as such.
    @Test func mmrsJudgedLineNamesTheListItsFiguresAreOf() throws {
        var state = try searched()
        let asked = try #require(search(in: AppFixtures.press([.character("x")], on: &state)))
        var judgedResult = Self.result
        var scores = RetrievalMetrics.Scores(averagePrecision: 0.3, reciprocalRank: 0.5)
        scores.ndcg[10] = 0.412
        scores.recall[100] = 0.5
        judgedResult.judged = JudgedQuery(
            source: "qrels.trec", id: "7", judgments: ["879": 2, "52": 0, "9": 1, "12": 2], scores: scores)
        judgedResult.judged?.mmrLambda = 0.7
        var hybrid = scores
        hybrid.ndcg[10] = 0.528
        judgedResult.judged?.byRetriever = ["bm25": hybrid, "hybrid": hybrid]
        _ = state.update(AppFixtures.answer(asked, judgedResult))
        let text = state.render().text()
        #expect(
            text.contains(
                "q7 of qrels.trec · MMR λ 0.7 list: nDCG@10 0.412 · 2 of 3 relevant missed (v) · R@100 0.500 · RR 0.500"
                    + " · without MMR: bm25 0.528, hybrid 0.528"))
        #expect(!text.contains("nDCG@10 0.528"))
        // At 80 columns the headline is cut, and says so; what was missed survives the cut.
        var narrow = try searched(width: 80, height: 24)
        let again = try #require(search(in: AppFixtures.press([.character("x")], on: &narrow)))
        _ = narrow.update(AppFixtures.answer(again, judgedResult))
        let headline = try #require(
            narrow.render().text().split(separator: "\n").first { $0.contains("MMR λ 0.7 list") })
        #expect(headline.hasSuffix("…│"), "\(headline)")
        #expect(headline.contains("2 of 3 relevant missed"), "\(headline)")
    }

    /// A query word that is in no chunk is named, with the closest indexed word.
    @Test func queryTermsNotInTheIndexAreNamedWithADidYouMean() throws {
        var state = try searched()
        var typo = Self.result
        typo.unmatched = [UnmatchedTerm(term: "hypersonc", suggestion: "hypersonic")]
        let asked = try #require(search(in: AppFixtures.press([.character("m")], on: &state)))
        _ = state.update(AppFixtures.answer(asked, typo))
        #expect(
            state.render().text().contains(
                "a query term matches no chunk (BM25 skips it): “hypersonc” → did you mean “hypersonic”?"))
    }

    /// Dense scores from a corpus embedded in int8 say so in the panel's title; fp32 says nothing.
    @Test func int8EmbeddingsAreNamedInTheTitle() throws {
        var state = try searched()
        #expect(!state.render().text().contains("embeddings"))
        var int8 = Self.result
        int8.embeddingPrecision = "int8"
        let asked = try #require(search(in: AppFixtures.press([.character("m")], on: &state)))
        _ = state.update(AppFixtures.answer(asked, int8))
        #expect(state.render().text().contains("mmr off · int8 embeddings"))
    }

    /// `+`/`-` set how many hits come back; `[`/`]` MMR's λ once MMR is on.
    @Test func depthAndLambdaFromTheKeyboard() throws {
        var state = try searched()
        let deeper = try #require(search(in: AppFixtures.press([.character("+")], on: &state)))
        #expect(deeper.request.options.k == 20)
        _ = state.update(AppFixtures.answer(deeper, Self.result))
        #expect(try #require(search(in: AppFixtures.press([.character("+")], on: &state))).request.options.k == 50)
        #expect(try #require(search(in: AppFixtures.press([.character("-")], on: &state))).request.options.k == 20)
        #expect(AppFixtures.press([.character("]")], on: &state).isEmpty)
        #expect(state.message?.text.contains("x turns MMR on first") == true)
        AppFixtures.press([.character("x")], on: &state)
        let lower = try #require(search(in: AppFixtures.press([.character("[")], on: &state)))
        #expect(lower.request.options.mmr && abs(lower.request.options.mmrLambda - 0.6) < 1e-6)
        _ = state.update(AppFixtures.answer(lower, Self.result))
        #expect(state.render().text().contains("k 20 · stem off · mmr λ 0.6"))
    }

    /// `/` searches the hits (title, document, text) instead of saying there is nothing.
    @Test func slashSearchesTheHits() throws {
        var state = try searched()
        AppFixtures.press([.character("/")], on: &state)
        #expect(state.mode == .search && state.message == nil)
        _ = AppFixtures.type("1337", on: &state)
        #expect((state.panels[state.focusedPanel] as? RetrievalPanel)?.list.selected == 1)
    }

    @Test func fusionMovementIsShownAgainstBM25() {
        #expect(RetrievalPanel.movement(Self.result.hits[0]) == "=")
        #expect(RetrievalPanel.movement(Self.result.hits[1]) == "↑4")
        #expect(RetrievalPanel.movement(Self.result.hits[2]) == "new")
        #expect(RetrievalPanel.movement(Self.result.hits[3]) == "↓2")
    }

    /// At 120 columns the hybrid list keeps the RRF score that orders it; the rank-change column
    /// is named for the retriever that moved the hit (none for BM25 alone, where nothing moves).
    @Test func theRRFColumnFitsAt120AndTheRankChangeIsNamedForTheMode() throws {
        var state = try searched(width: 120, height: 36)
        func header(_ state: AppState) -> String {
            state.render().text().split(separator: "\n").first { $0.contains("title") && $0.contains("bm25") }
                .map(String.init) ?? ""
        }
        #expect(header(state).contains(" rrf"), "\(header(state))")
        #expect(state.render().text().contains("0.0320"))
        #expect(!header(state).contains("Δbm25"))
        var wide = try searched()
        #expect(header(wide).contains("Δrrf"))
        let bm25 = try #require(search(in: AppFixtures.press([.character("m")], on: &wide)))
        _ = wide.update(AppFixtures.answer(bm25, Self.result))
        #expect(!header(wide).contains("Δ") && !header(wide).contains(" rrf"), "\(header(wide))")
        let dense = try #require(search(in: AppFixtures.press([.character("m")], on: &wide)))
        #expect(dense.request.options.retriever == .dense)
        _ = wide.update(AppFixtures.answer(dense, Self.result))
        #expect(header(wide).contains("Δdense"), "\(header(wide))")
    }

    /// Side by side, each hit shows its retriever's score, and the cursor is a rank lit in both
    /// columns, with where each of its documents ranks in the other retriever.
    @Test func sideBySideShowsScoresAndARankCursor() throws {
        var state = try searched(width: 120, height: 36)
        AppFixtures.press([.character("v")], on: &state)
        var text = state.render().text()
        #expect(text.contains("BM25 · score") && text.contains("dense · cosine"))
        #expect(text.contains("1.   9.00  879") && text.contains("1. 0.890  1337"), "\(text)")
        #expect(
            text.contains(
                "rank 1 · BM25: doc 879 9.00, not in dense's candidates · dense: doc 1337 0.890, not in BM25's"))
        AppFixtures.press([.character("j")], on: &state)
        #expect(panel(state).list.selected == 1)
        text = state.render().text()
        #expect(text.contains("rank 2 · BM25: doc 415 8.00"))
        AppFixtures.press([.character("j"), .character("j")], on: &state)
        #expect(panel(state).list.selected == 1)  // two ranks in each column
    }

    @Test func switchingTheRetrieverReRanksTheSameQuery() throws {
        var state = try searched()
        let asked = try #require(search(in: AppFixtures.press([.character("m")], on: &state)))
        #expect(asked.request.query == "flutter transonic" && asked.request.options.retriever == .bm25)
        let stemmed = try #require(search(in: AppFixtures.press([.character("t")], on: &state)))
        #expect(stemmed.request.options.stem)
    }

    @Test func xTogglesMMRAndReRanksTheSameQuery() throws {
        var state = try searched()
        let on = try #require(search(in: AppFixtures.press([.character("x")], on: &state)))
        #expect(on.request.query == "flutter transonic")
        #expect(on.request.options.mmr)
        #expect(on.request.options.retriever == .hybrid)
        _ = state.update(AppFixtures.answer(on, Self.result))
        #expect(state.render().text().contains("mmr λ 0.7"))
        let off = try #require(search(in: AppFixtures.press([.character("x")], on: &state)))
        #expect(!off.request.options.mmr)
    }

    @Test func enterOpensTheWholeDocumentAndEscGoesBack() throws {
        var state = try searched()
        AppFixtures.press([.character("j")], on: &state)
        #expect(AppFixtures.press([.enter], on: &state) == [.ask(RetrievalPanel.OpenDocument(id: "1337"))])
        _ = state.update(
            AppFixtures.answer(
                RetrievalPanel.OpenDocument(id: "1337"),
                RetrievalDocument(title: "sweep", body: "Sweep body about flutter.")))
        #expect(state.render().text().contains("Sweep body about flutter."))
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state).view == .hits)
    }

    @Test func failuresAreShownAndUntrustedTextIsNeutralised() throws {
        var state = try searched()
        AppFixtures.press([.character("j"), .character("j"), .character("j")], on: &state)
        let text = state.render().text()
        #expect(!text.contains("\u{1B}"))
        #expect(text.contains("Second line"))
        let asked = try #require(search(in: AppFixtures.press([.character("x")], on: &state)))
        _ = state.update(AppFixtures.failure(asked, "1398 chunks have no embedding"))
        #expect(state.render().text().contains("1398 chunks have no embedding"))
    }

    @Test func screensAt160x48() throws {
        let hits = try searched()
        expectPanel(hits, matchesGolden: "retrieval-hits-160x48")
        var side = try searched()
        AppFixtures.press([.character("v")], on: &side)
        expectPanel(side, matchesGolden: "retrieval-side-160x48")
        var empty = AppFixtures.state(width: 80, height: 24)
        AppFixtures.press([.character("2")], on: &empty)
        expectPanel(empty, matchesGolden: "retrieval-empty-80x24")
    }

    static let sweeps: [ANNCurves] = ANNCurves.grouped([
        ANNSweepRecord(
            workload: "synthetic 100000 × 384, 1000 queries", engine: "loupe", buildSeconds: 61,
            points: [
                .init(ef: 10, recallAt10: 0.921, queriesPerSecond: 16100),
                .init(ef: 14, recallAt10: 0.951, queriesPerSecond: 12800),
                .init(ef: 32, recallAt10: 0.985, queriesPerSecond: 6900),
                .init(ef: 128, recallAt10: 0.998, queriesPerSecond: 2100),
            ], machine: "test"),
        ANNSweepRecord(
            workload: "synthetic 100000 × 384, 1000 queries", engine: "hnswlib", version: "0.8.0", buildSeconds: 88,
            points: [
                .init(ef: 10, recallAt10: 0.915, queriesPerSecond: 13000),
                .init(ef: 14, recallAt10: 0.949, queriesPerSecond: 10300),
                .init(ef: 32, recallAt10: 0.984, queriesPerSecond: 5600),
                .init(ef: 128, recallAt10: 0.998, queriesPerSecond: 1700),
            ], machine: "test"),
        ANNSweepRecord(
            workload: "synthetic 100000 × 384, 1000 queries", engine: "faiss", version: "1.9.0", buildSeconds: 90,
            points: [
                .init(ef: 10, recallAt10: 0.90, queriesPerSecond: 11000),
                .init(ef: 32, recallAt10: 0.98, queriesPerSecond: 5200),
            ], machine: "test"),
        ANNSweepRecord(
            workload: "cranfield \u{1B}[31m sentences", engine: "loupe",
            points: [.init(ef: 10, recallAt10: 0.97, queriesPerSecond: 30000)], machine: "test"),
    ])

    @Test func cDrawsTheKeptRecallQPSCurvesAndEscGoesBack() throws {
        var state = AppFixtures.state(width: 120, height: 36)
        AppFixtures.press([.character("2")], on: &state)
        #expect(AppFixtures.press([.character("c")], on: &state) == [.ask(RetrievalPanel.LoadCurves())])
        #expect(panel(state).view == .curves)
        #expect(state.render().text().contains("Reading the sweeps…"))
        _ = state.update(AppFixtures.answer(RetrievalPanel.LoadCurves(), []))
        #expect(state.render().text().contains("No sweeps kept yet"))

        _ = state.update(AppFixtures.answer(RetrievalPanel.LoadCurves(), Self.sweeps))
        let frame = state.render()
        let text = frame.text()
        #expect(text.contains("workload 1/2 synthetic 100000 × 384, 1000 queries"))
        #expect(text.contains("● loupe      12,910 q/s at recall@10 0.95 · build 61 s"))
        #expect(text.contains("■ hnswlib    10,166 q/s at recall@10 0.95 · build 88 s · 0.8.0"))
        #expect(text.contains("▲ faiss      7,375 q/s at recall@10 0.95 · build 90 s · 1.9.0"))
        #expect(text.contains("loupe ÷ hnswlib (the fastest peer there): 1.27×"))
        // Braille lines between the marks, decades up the side, recall along the bottom.
        #expect(text.unicodeScalars.contains { (0x2801...0x28FF).contains($0.value) })
        #expect(text.contains("10,000") && text.contains("0.90") && text.contains("recall@10"))
        expectPanel(state, matchesGolden: "retrieval-curves-120x36")

        // ↓ shows the next workload, its name neutralised.
        AppFixtures.press([.down], on: &state)
        let next = state.render().text()
        #expect(next.contains("workload 2/2 cranfield") && !next.contains("\u{1B}"))
        AppFixtures.press([.escape], on: &state)
        #expect(panel(state).view == .hits)
    }
}
