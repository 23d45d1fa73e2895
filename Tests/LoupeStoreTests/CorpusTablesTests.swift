import Foundation
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// The corpus as ingest writes it and retrieval reads it: sources, documents, chunks,
/// embeddings, stored indexes, judgments and saved query runs. Every test runs on a SQLite
/// workspace and on a real PostgreSQL server.
@Suite struct CorpusTablesTests {
    typealias Backend = StoreBackend

    static func document(_ id: String, _ body: String, chunkWords: Int = 2) -> IngestDocument {
        // Chunks of `chunkWords` words, as byte ranges of the body.
        var chunks: [IngestDocument.Chunk] = []
        let words = body.split(separator: " ")
        for start in stride(from: 0, to: words.count, by: chunkWords) {
            let slice = words[start..<min(words.count, start + chunkWords)]
            let from = body.utf8.distance(from: body.startIndex, to: slice.first!.startIndex)
            let to = body.utf8.distance(from: body.startIndex, to: slice.last!.endIndex)
            chunks.append(IngestDocument.Chunk(startByte: from, endByte: to, text: slice.joined(separator: " ")))
        }
        return IngestDocument(externalID: id, title: "Title of \(id)", body: body, chunks: chunks)
    }

    static func ingest(_ corpus: CorpusTables, path: String = "/corpus/a.jsonl", hash: String = "h1") throws {
        try corpus.replaceSource(
            path: path, hash: hash, format: "jsonl", chunkerJSON: #"{"words":2}"#,
            documents: [document("d1", "lift of a wing in a slipstream"), document("d2", "heat transfer in slabs")])
    }

    @Test(arguments: Backend.allCases) func aSourceIsStoredWithItsDocumentsAndChunksInOrder(_ backend: Backend) throws {
        let corpus = CorpusTables(try backend.database("corpus"))
        #expect(try corpus.sourceHash(path: "/corpus/a.jsonl") == nil)
        try Self.ingest(corpus)
        #expect(try corpus.sourceHash(path: "/corpus/a.jsonl") == "h1")
        let counts = try corpus.corpusCounts()
        #expect(counts.sources == 1 && counts.documents == 2 && counts.chunks == 6 && counts.embedded == 0)

        let chunks = try corpus.chunks()
        #expect(chunks.map(\.text) == ["lift of", "a wing", "in a", "slipstream", "heat transfer", "in slabs"])
        #expect(chunks.map(\.documentID) == ["d1", "d1", "d1", "d1", "d2", "d2"])
        #expect(chunks.map(\.ordinal) == [0, 1, 2, 3, 0, 1])
        // A chunk is a byte range of its document's body.
        let body = Array("lift of a wing in a slipstream".utf8)
        let second = chunks[1]
        #expect(String(decoding: body[second.startByte..<second.endByte], as: UTF8.self) == second.text)
        #expect(second.title == "Title of d1")

        let document = try #require(try corpus.document(externalID: "d2"))
        #expect(document.title == "Title of d2" && document.body == "heat transfer in slabs")
        #expect(try corpus.document(externalID: "d3") == nil)
    }

    @Test(arguments: Backend.allCases) func reingestingASourceReplacesItsDocumentsAndChangesTheStamp(_ backend: Backend)
        throws
    {
        let corpus = CorpusTables(try backend.database("corpus"))
        try Self.ingest(corpus)
        try Self.ingest(corpus, path: "/corpus/b.jsonl")
        let stamp = try corpus.corpusStamp()
        #expect(try corpus.corpusCounts().chunks == 12)

        try corpus.replaceSource(
            path: "/corpus/a.jsonl", hash: "h2", format: "jsonl", chunkerJSON: "{}",
            documents: [Self.document("d9", "one new document")])
        let counts = try corpus.corpusCounts()
        // a.jsonl's two documents went with it (cascade); b.jsonl's stayed.
        #expect(counts.sources == 2 && counts.documents == 3 && counts.chunks == 8)
        #expect(try corpus.sourceHash(path: "/corpus/a.jsonl") == "h2")
        #expect(try corpus.document(externalID: "d9") != nil)
        #expect(try corpus.corpusStamp() != stamp)
        if let file = corpus.database as? Workspace { #expect(try file.check().isHealthy) }
    }

    @Test(arguments: Backend.allCases) func theCorpusStampIsStableUntilChunksChange(_ backend: Backend) throws {
        let corpus = CorpusTables(try backend.database("corpus"))
        #expect(try corpus.corpusStamp() == "0:0:0")
        try Self.ingest(corpus)
        let stamp = try corpus.corpusStamp()
        #expect(try corpus.corpusStamp() == stamp)
        // The same content ingested again gets new chunk ids: an index built before is stale.
        try Self.ingest(corpus)
        #expect(try corpus.corpusStamp() != stamp)
    }

    @Test(arguments: Backend.allCases) func embeddingsAreStoredPerModelAndMissingOnesListed(_ backend: Backend) throws {
        let corpus = CorpusTables(try backend.database("corpus"))
        try Self.ingest(corpus)
        let chunks = try corpus.chunks()
        #expect(try corpus.chunksWithoutEmbedding(model: "m").map(\.id) == chunks.map(\.id))

        try corpus.storeEmbeddings([(chunks[0].id, [1, 2, 3]), (chunks[1].id, [0.5, -1, 0])], model: "m")
        #expect(try corpus.corpusCounts(model: "m").embedded == 2)
        #expect(try corpus.corpusCounts(model: "other").embedded == 0)
        #expect(try corpus.chunksWithoutEmbedding(model: "m").map(\.id) == chunks.dropFirst(2).map(\.id))
        // Another model's embedding does not count as this one's.
        #expect(try corpus.chunksWithoutEmbedding(model: "other").count == chunks.count)

        let stored = try corpus.embeddings(model: "m", dimensions: 3)
        #expect(stored.map(\.id) == [chunks[0].id, chunks[1].id])
        #expect(stored.map(\.vector) == [[1, 2, 3], [0.5, -1, 0]])
        // A vector of another size does not read back as one of these.
        try corpus.storeEmbeddings([(chunks[2].id, [1, 2])], model: "m")
        #expect(try corpus.embeddings(model: "m", dimensions: 3).map(\.id) == [chunks[0].id, chunks[1].id])
    }

    @Test(arguments: Backend.allCases) func anIndexIsStoredByKindAndReplaced(_ backend: Backend) throws {
        let corpus = CorpusTables(try backend.database("corpus"))
        #expect(try corpus.storedIndex(kind: "bm25") == nil)
        let first = StoredIndex(kind: "bm25", paramsJSON: "{}", corpusStamp: "1:1:1", data: Data([1, 2, 3]))
        try corpus.storeIndex(first)
        #expect(try corpus.storedIndex(kind: "bm25") == first)
        let second = StoredIndex(kind: "bm25", paramsJSON: #"{"stem":true}"#, corpusStamp: "2:2:3", data: Data([4]))
        try corpus.storeIndex(second)
        #expect(try corpus.storedIndex(kind: "bm25") == second)
        #expect(try corpus.storedIndex(kind: "hnsw") == nil)
    }

    @Test(arguments: Backend.allCases) func qrelsAreReplacedPerSourceAndTheLastLoadedIsTheDefault(_ backend: Backend)
        throws
    {
        let corpus = CorpusTables(try backend.database("qrels"))
        #expect(try corpus.qrels() == nil)
        try corpus.replaceQrels(source: "a.trec", judgments: ["1": ["d1": 2, "d2": 1], "2": ["d3": 1]])
        try corpus.replaceQrels(source: "b.trec", judgments: ["7": ["d9": 1]])
        let latest = try #require(try corpus.qrels())
        #expect(latest.source == "b.trec" && latest.judgments == ["7": ["d9": 1]])
        let named = try #require(try corpus.qrels(source: "a.trec"))
        #expect(named.judgments == ["1": ["d1": 2, "d2": 1], "2": ["d3": 1]])
        #expect(try corpus.qrels(source: "missing.trec") == nil)

        // Loading a file of the same name again replaces its judgments rather than adding to them.
        try corpus.replaceQrels(source: "a.trec", judgments: ["1": ["d4": 1]])
        #expect(try corpus.qrels(source: "a.trec")?.judgments == ["1": ["d4": 1]])
        #expect(try corpus.qrels()?.source == "a.trec")
    }

    @Test(arguments: Backend.allCases) func judgedQueriesComeNewestSourceFirst(_ backend: Backend) throws {
        let corpus = CorpusTables(try backend.database("qrels"))
        try corpus.replaceQrelsQueries(source: "a.trec", queries: [("1", "wing lift"), ("2", "heat slabs")])
        try corpus.replaceQrelsQueries(source: "b.trec", queries: [("7", "boundary layer")])
        #expect(try corpus.judgedQueries().map(\.source) == ["b.trec", "a.trec", "a.trec"])
        try corpus.replaceQrelsQueries(source: "a.trec", queries: [("3", "shock waves")])
        let queries = try corpus.judgedQueries()
        #expect(queries.map(\.id) == ["3", "7"])
        #expect(queries.first?.text == "shock waves")
    }

    @Test(arguments: Backend.allCases) func retrievalRecordsReadBackNewestFirstAndByID(_ backend: Backend) throws {
        let corpus = CorpusTables(try backend.database("records"))
        let first = try corpus.recordRetrieval(query: "wing", retriever: "bm25", paramsJSON: "{}", hitsJSON: "[]")
        let second = try corpus.recordRetrieval(
            query: "heat", retriever: "hybrid", paramsJSON: #"{"k":5}"#, hitsJSON: #"[{"rank":1}]"#)
        #expect(try corpus.retrievalRecords().map(\.id) == [second, first])
        #expect(try corpus.retrievalRecords(limit: 1).map(\.query) == ["heat"])
        let one = try #require(try corpus.retrievalRecords(id: first).first)
        #expect(one.query == "wing" && one.retriever == "bm25" && one.hitsJSON == "[]")
        #expect(try corpus.retrievalRecords(id: 99).isEmpty)

        let eval = try corpus.recordRetrievalEval(
            retriever: "bm25", paramsJSON: "{}", queries: "queries.jsonl", qrelsSource: "a.trec",
            meanJSON: #"{"ndcg@10":0.4}"#, perQueryJSON: "{}")
        #expect(eval == 1)
        let evals = try corpus.database.readStatements { sql in
            try sql.execute("SELECT retriever, qrels_source FROM retrieval_evals")
        }
        #expect(evals.map { [$0.text("retriever"), $0.text("qrels_source")] } == [["bm25", "a.trec"]])
    }

    /// More documents than PostgreSQL takes in one statement (1,000 rows): each chunk still
    /// belongs to its own document, and is the byte range of that document's body it says.
    @Test(arguments: Backend.allCases) func manyDocumentsKeepTheirChunks(_ backend: Backend) throws {
        let corpus = CorpusTables(try backend.database("many"))
        let documents = (0..<2_345).map { Self.document("doc\($0)", "word\($0) and more of \($0) here") }
        try corpus.replaceSource(
            path: "/corpus/many.jsonl", hash: "m", format: "jsonl", chunkerJSON: "{}", documents: documents)
        let chunks = try corpus.chunks()
        #expect(chunks.count == documents.reduce(0) { $0 + $1.chunks.count })
        for chunk in chunks {
            let number = chunk.documentID.dropFirst(3)
            let body = Array("word\(number) and more of \(number) here".utf8)
            #expect(String(decoding: body[chunk.startByte..<chunk.endByte], as: UTF8.self) == chunk.text)
            #expect(chunk.title == "Title of \(chunk.documentID)")
        }
        #expect(Set(chunks.map(\.documentID)).count == documents.count)
        #expect(try corpus.corpusCounts().documents == documents.count)
    }
}
