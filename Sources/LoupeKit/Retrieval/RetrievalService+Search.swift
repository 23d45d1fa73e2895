import Foundation
import LoupeModels
import LoupeRetrieval
import LoupeStore
import LoupeTensor

extension RetrievalService {
    /// Ranked chunks for `query`, each with every retriever's score and rank.
    package func search(_ query: String, options: Options) throws -> [Hit] {
        let ranked = try rank(query, options: options, context: try context(for: options))
        return ranked
    }

    /// What a batch of queries shares: the chunks, the indexes, the embedder.
    package struct Context {
        var chunks: [StoredChunk]
        var bm25: BM25Index
        var flat: FlatIndex?
        var hnsw: DenseGraph?
        var embedder: SentenceEmbedder?
    }

    package func context(for options: Options) throws -> Context {
        let (chunks, bm25, _) = try bm25(stem: options.stem)
        guard options.retriever != .bm25 || options.mmr else {
            return Context(chunks: chunks, bm25: bm25, flat: nil, hnsw: nil, embedder: nil)
        }
        let flat = try flatIndex(chunks: chunks)
        return Context(
            chunks: chunks, bm25: bm25, flat: flat,
            hnsw: options.approximate ? try hnsw(chunks: chunks, flat: flat) : nil,
            embedder: try models.miniLM(precision: try precision()))
    }

    /// The HNSW graph over the chunks' embeddings, each node labelled with its chunk id.
    package struct DenseGraph {
        package var index: HNSWIndex
        /// Each node's row in the chunks it was loaded against (-1: tombstoned).
        package var rows: [Int]
        package var update: Update

        /// What loading did to the stored graph.
        package enum Update: Equatable, Sendable {
            case unchanged
            /// Chunks came or went since it was stored: inserted and tombstoned in place.
            case updated(added: Int, deleted: Int)
            case rebuilt
        }

        /// The `k` nearest chunks (rows) to `vector`.
        func search(_ vector: [Float], k: Int, ef: Int) -> [(index: Int, score: Float)] {
            index.search(vector, k: k, ef: ef).map { (rows[$0.index], $0.score) }
        }
    }

    /// The stored HNSW graph brought up to date with `chunks`: as stored when nothing changed;
    /// when chunks came or went since, the new ones inserted and the removed ones tombstoned (a
    /// re-ingested file costs its own chunks, not the corpus); rebuilt (M 16, efConstruction
    /// 200) when there is none, its BLOB does not read back, the embedding model changed, or
    /// tombstones would pass half the nodes. Stored again after any change.
    package func hnsw(chunks: [StoredChunk], flat: FlatIndex) throws -> DenseGraph {
        let model = try embeddingModel()
        let stamp = try corpus.corpusStamp() + ":" + model
        let rowOf = Dictionary(chunks.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        func vector(_ row: Int) -> [Float] {
            Array(flat.vectors[(row * flat.dimensions)..<((row + 1) * flat.dimensions)])
        }
        func rows(_ index: HNSWIndex) -> [Int] {
            (0..<index.count).map { index.deleted[$0] ? -1 : rowOf[index.labels[$0]] ?? -1 }
        }
        var update = DenseGraph.Update.rebuilt
        var graph: HNSWIndex?
        if let stored = try corpus.storedIndex(kind: "hnsw"),
            stored.corpusStamp.hasSuffix(":" + model),
            var index = HNSWIndex(serialized: stored.data, dimensions: flat.dimensions)
        {
            if stored.corpusStamp == stamp {
                return DenseGraph(index: index, rows: rows(index), update: .unchanged)
            }
            var present = Set<Int64>()
            var removed = 0
            for node in 0..<index.count where !index.deleted[node] {
                if rowOf[index.labels[node]] == nil {
                    index.delete(node)
                    removed += 1
                } else {
                    present.insert(index.labels[node])
                }
            }
            let added = chunks.filter { !present.contains($0.id) }
            if 2 * index.deletedCount <= index.count + added.count {
                for chunk in added { index.add(vector(rowOf[chunk.id]!), label: chunk.id) }
                graph = index
                update = .updated(added: added.count, deleted: removed)
            }
        }
        if graph == nil {
            var index = HNSWIndex(dimensions: flat.dimensions, parameters: .init(m: 16, efConstruction: 200))
            for (row, chunk) in chunks.enumerated() { index.add(vector(row), label: chunk.id) }
            graph = index
        }
        let index = graph!
        try corpus.storeIndex(
            StoredIndex(
                kind: "hnsw", paramsJSON: "{\"m\":16,\"ef_construction\":200,\"metric\":\"cosine\"}",
                corpusStamp: stamp, data: index.serialized()))
        return DenseGraph(index: index, rows: rows(index), update: update)
    }

    /// Ranked hits; `details` adds the matched terms and BM25 contributions (an evaluation,
    /// which only needs the order, leaves them out). `profile` times the query's MiniLM
    /// forward pass operation by operation, when there is one.
    package func rank(
        _ query: String, options: Options, context: Context, details: Bool = true, profile: OperationProfile? = nil
    ) throws -> [Hit] {
        assemble(
            candidates(query, options: options, context: context, profile: profile), options: options,
            context: context, details: details)
    }

    /// What each retriever found for a query, before fusion: computed once (one BM25 pass, one
    /// MiniLM forward for the query), then assembled into as many views as needed.
    package struct Candidates {
        var terms: [String]
        var lexical: [(document: Int, score: Double)]
        var semantic: [(index: Int, score: Float)]
        var queryVector: [Float]?
    }

    /// BM25's and (when the context has vectors) dense's top `max(k, depth)` for `query`.
    package func candidates(
        _ query: String, options: Options, context: Context, profile: OperationProfile? = nil
    ) -> Candidates {
        let terms = RetrievalTokenizer(stem: options.stem).terms(query)
        let parameters = BM25Index.Parameters(k1: options.k1, b: options.b)
        let depth = max(options.k, options.depth)
        let lexical = context.bm25.search(terms, k: depth, parameters: parameters)
        var queryVector: [Float]?
        var semantic: [(index: Int, score: Float)] = []
        if let flat = context.flat, let embedder = context.embedder {
            let vector = embedder.embed([query], profile: profile)[0].vector
            queryVector = vector
            if let hnsw = context.hnsw {
                semantic = hnsw.search(vector, k: depth, ef: max(options.efSearch, depth))
            } else {
                semantic = flat.search(vector, k: depth)
            }
        }
        return Candidates(terms: terms, lexical: lexical, semantic: semantic, queryVector: queryVector)
    }

    /// The first `depth` hits (`options.k` when nil) of `options.retriever` (fused for hybrid, MMR
    /// when asked) from `candidates`; `details` adds the matched terms and BM25 contributions.
    ///
    /// MMR re-ranks the first max(3k, 30) of the ranking whatever the depth, and the rest follow in
    /// their order, so a deeper list begins with the k hits shown.
    package func assemble(
        _ candidates: Candidates, options: Options, context: Context, details: Bool = true, depth: Int? = nil
    ) -> [Hit] {
        let depth = depth ?? options.k
        let (terms, lexical, semantic, queryVector) = (
            candidates.terms, candidates.lexical, candidates.semantic, candidates.queryVector
        )
        let tokenizer = RetrievalTokenizer(stem: options.stem)
        let parameters = BM25Index.Parameters(k1: options.k1, b: options.b)
        var bm25Places: [Int: Placement] = [:]
        for (rank, hit) in lexical.enumerated() {
            bm25Places[hit.document] = Placement(score: hit.score, rank: rank + 1)
        }
        var densePlaces: [Int: Placement] = [:]
        for (rank, hit) in semantic.enumerated() {
            densePlaces[hit.index] = Placement(score: Double(hit.score), rank: rank + 1)
        }
        var order: [(index: Int, score: Double)]
        switch options.retriever {
        case .bm25: order = lexical.map { ($0.document, $0.score) }
        case .dense: order = semantic.map { ($0.index, Double($0.score)) }
        case .hybrid:
            let fused = RankFusion.reciprocalRank(
                [lexical.map { String($0.document) }, semantic.map { String($0.index) }], weights: options.weights,
                k: options.rrfK)
            order = fused.map { (Int($0.document)!, $0.score) }
        }
        if options.mmr, let queryVector, let flat = context.flat {
            let pool = order.prefix(max(options.k * 3, 30))
            let candidates = pool.map { item in
                (
                    id: item.index,
                    vector: Array(flat.vectors[(item.index * flat.dimensions)..<((item.index + 1) * flat.dimensions)])
                )
            }
            let scores = Dictionary(order.map { ($0.index, $0.score) }, uniquingKeysWith: { a, _ in a })
            // MMR picks greedily, so its first k are the same whether it is asked for k or more.
            let picked = MMR.rerank(
                query: queryVector, candidates: candidates, k: min(candidates.count, max(depth, options.k)),
                lambda: options.mmrLambda)
            let chosen = Set(picked)
            order =
                picked.map { ($0, scores[$0] ?? 0) } + pool.filter { !chosen.contains($0.index) }
                + order.dropFirst(pool.count)
        }
        let querySet = Set(terms)
        // A chunk's section: the heading of the nearest chunk at or before it in its document
        // that starts one (chunks are stored in document order).
        func section(_ index: Int) -> String? {
            var at = index
            let document = context.chunks[index].documentID
            // Markdown documents only: a `# ` line in plain text or JSONL is not a heading.
            let lower = document.lowercased()
            guard lower.hasSuffix(".md") || lower.hasSuffix(".markdown") else { return nil }
            while at >= 0, context.chunks[at].documentID == document {
                if let heading = Hit.heading(context.chunks[at].text) { return heading }
                at -= 1
            }
            return nil
        }
        return order.prefix(depth).enumerated().map { rank, item in
            let chunk = context.chunks[item.index]
            let chunkTerms = details ? Set(tokenizer.terms(chunk.text)) : []
            var hit = Hit(
                rank: rank + 1, chunkID: chunk.id, documentID: chunk.documentID, title: chunk.title,
                ordinal: chunk.ordinal, startByte: chunk.startByte, endByte: chunk.endByte, text: chunk.text,
                bm25: bm25Places[item.index], dense: densePlaces[item.index],
                fused: Placement(score: item.score, rank: rank + 1),
                matchedTerms: terms.reduce(into: [String]()) {
                    if querySet.contains($1) && chunkTerms.contains($1) && !$0.contains($1) { $0.append($1) }
                },
                contributions: details ? context.bm25.explain(terms, document: item.index, parameters: parameters) : [])
            hit.section = section(item.index)
            return hit
        }
    }
}

extension RetrievalService {
    /// A query's hits with BM25's and dense's own top k (dense only when the chunks are
    /// embedded, so a BM25-only workspace still answers) and its judgments when it is judged:
    /// what the Retrieval panel shows. Nothing is written.
    package func ranking(_ query: String, options: Options) throws -> RetrievalResult {
        let counts = try corpus.corpusCounts(model: try embeddingModel())
        guard counts.chunks > 0 else { throw RetrievalError("the workspace has no chunks yet: run loupe ingest FILE") }
        var options = options
        // MMR compares the chunks' embeddings even over BM25's hits: without them it would embed
        // the corpus here, a write from a read.
        if counts.embedded < counts.chunks && (options.retriever != .bm25 || options.mmr) {
            let missing = counts.chunks - counts.embedded
            throw RetrievalError(
                options.retriever == .bm25
                    ? "\(missing) chunks have no embedding, which MMR needs: run loupe ingest again (or press x for no MMR)"
                    : "\(missing) chunks have no embedding: run loupe ingest again (or press m for BM25)")
        }
        let context = try context(for: options)
        let found = candidates(query, options: options, context: context)
        let hits = assemble(found, options: options, context: context)
        let judged = try judge(query, candidates: found, options: options, context: context)
        options.mmr = false
        options.retriever = .bm25
        let bm25Top = assemble(found, options: options, context: context, details: false)
        var denseTop: [Hit] = []
        if context.flat != nil {
            options.retriever = .dense
            denseTop = assemble(found, options: options, context: context, details: false)
        }
        var seen = Set<String>()
        let unmatched = RetrievalTokenizer(stem: options.stem).terms(query)
            .filter { context.bm25.postings[$0] == nil && seen.insert($0).inserted }
            .map { UnmatchedTerm(term: $0, suggestion: context.bm25.closestTerm(to: $0)) }
        return RetrievalResult(
            hits: hits, bm25Top: bm25Top, denseTop: denseTop, judged: judged, unmatched: unmatched,
            embeddingPrecision: context.flat == nil ? nil : try precision().rawValue)
    }

    /// The judgments of a typed query that is one of the loaded judged queries (same terms),
    /// with the metrics of the ranking shown (MMR's when it is on) continued to depth 100, chunks
    /// rolled up to documents. Each document is scored by its place in that list, so trec_eval's
    /// order (score descending) is the order on screen, not the scores' order before MMR.
    package func judge(_ query: String, candidates: Candidates, options: Options, context: Context) throws
        -> JudgedQuery?
    {
        let tokenizer = RetrievalTokenizer()
        let terms = tokenizer.terms(query)
        guard !terms.isEmpty,
            let match = try corpus.judgedQueries().first(where: { tokenizer.terms($0.text) == terms }),
            let judgments = try corpus.qrels(source: match.source)?.judgments[match.id]
        else { return nil }
        // Documents in the order of their best chunk, at depth 100, each scored by its place.
        func documents(_ options: Options) -> [(document: String, score: Double)] {
            var order: [String] = []
            var seen = Set<String>()
            for hit in assemble(candidates, options: options, context: context, details: false, depth: 100)
            where seen.insert(hit.documentID).inserted {
                order.append(hit.documentID)
            }
            return order.enumerated().map { ($0.element, Double(order.count - $0.offset)) }
        }
        let ranked = documents(options)
        var judged = JudgedQuery(
            source: match.source, id: match.id, judgments: judgments,
            scores: RetrievalMetrics.evaluate(run: ranked, qrels: judgments))
        judged.mmrLambda = options.mmr ? options.mmrLambda : nil
        for (index, (document, _)) in ranked.enumerated() { judged.ranks[document] = index + 1 }
        for (document, grade) in judgments where grade > 0 {
            judged.titles[document] = try corpus.document(externalID: document)?.title
        }
        var alone = options
        alone.mmr = false
        for retriever in context.flat == nil ? [Retriever.bm25] : [.bm25, .dense, .hybrid] {
            alone.retriever = retriever
            judged.byRetriever[retriever.rawValue] = RetrievalMetrics.evaluate(
                run: documents(alone), qrels: judgments)
        }
        return judged
    }
}
