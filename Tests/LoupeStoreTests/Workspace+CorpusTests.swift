import Foundation
import LoupeStore
import Testing

/// The corpus as ingest writes it and retrieval reads it: sources, documents, chunks,
/// embeddings, stored indexes, judgments and saved query runs.
@Suite struct WorkspaceCorpusTests {
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

    static func ingest(_ workspace: Workspace, path: String = "/corpus/a.jsonl", hash: String = "h1") throws {
        try workspace.replaceSource(
            path: path, hash: hash, format: "jsonl", chunkerJSON: #"{"words":2}"#,
            documents: [document("d1", "lift of a wing in a slipstream"), document("d2", "heat transfer in slabs")])
    }

    @Test func aSourceIsStoredWithItsDocumentsAndChunksInOrder() throws {
        let workspace = try TemporaryWorkspace.make("corpus")
        #expect(try workspace.sourceHash(path: "/corpus/a.jsonl") == nil)
        try Self.ingest(workspace)
        #expect(try workspace.sourceHash(path: "/corpus/a.jsonl") == "h1")
        let counts = try workspace.corpusCounts()
        #expect(counts.sources == 1 && counts.documents == 2 && counts.chunks == 6 && counts.embedded == 0)

        let chunks = try workspace.chunks()
        #expect(chunks.map(\.text) == ["lift of", "a wing", "in a", "slipstream", "heat transfer", "in slabs"])
        #expect(chunks.map(\.documentID) == ["d1", "d1", "d1", "d1", "d2", "d2"])
        #expect(chunks.map(\.ordinal) == [0, 1, 2, 3, 0, 1])
        // A chunk is a byte range of its document's body.
        let body = Array("lift of a wing in a slipstream".utf8)
        let second = chunks[1]
        #expect(String(decoding: body[second.startByte..<second.endByte], as: UTF8.self) == second.text)
        #expect(second.title == "Title of d1")

        let document = try #require(try workspace.document(externalID: "d2"))
        #expect(document.title == "Title of d2" && document.body == "heat transfer in slabs")
        #expect(try workspace.document(externalID: "d3") == nil)
    }

    @Test func reingestingASourceReplacesItsDocumentsAndChangesTheStamp() throws {
        let workspace = try TemporaryWorkspace.make("corpus")
        try Self.ingest(workspace)
        try Self.ingest(workspace, path: "/corpus/b.jsonl")
        let stamp = try workspace.corpusStamp()
        #expect(try workspace.corpusCounts().chunks == 12)

        try workspace.replaceSource(
            path: "/corpus/a.jsonl", hash: "h2", format: "jsonl", chunkerJSON: "{}",
            documents: [Self.document("d9", "one new document")])
        let counts = try workspace.corpusCounts()
        // a.jsonl's two documents went with it (cascade); b.jsonl's stayed.
        #expect(counts.sources == 2 && counts.documents == 3 && counts.chunks == 8)
        #expect(try workspace.sourceHash(path: "/corpus/a.jsonl") == "h2")
        #expect(try workspace.document(externalID: "d9") != nil)
        #expect(try workspace.corpusStamp() != stamp)
        #expect(try workspace.check().isHealthy)
    }

    @Test func theCorpusStampIsStableUntilChunksChange() throws {
        let workspace = try TemporaryWorkspace.make("corpus")
        #expect(try workspace.corpusStamp() == "0:0:0")
        try Self.ingest(workspace)
        let stamp = try workspace.corpusStamp()
        #expect(try workspace.corpusStamp() == stamp)
        // The same content ingested again gets new chunk ids: an index built before is stale.
        try Self.ingest(workspace)
        #expect(try workspace.corpusStamp() != stamp)
    }

    @Test func embeddingsAreStoredPerModelAndMissingOnesListed() throws {
        let workspace = try TemporaryWorkspace.make("corpus")
        try Self.ingest(workspace)
        let chunks = try workspace.chunks()
        #expect(try workspace.chunksWithoutEmbedding(model: "m").map(\.id) == chunks.map(\.id))

        try workspace.storeEmbeddings([(chunks[0].id, [1, 2, 3]), (chunks[1].id, [0.5, -1, 0])], model: "m")
        #expect(try workspace.corpusCounts(model: "m").embedded == 2)
        #expect(try workspace.corpusCounts(model: "other").embedded == 0)
        #expect(try workspace.chunksWithoutEmbedding(model: "m").map(\.id) == chunks.dropFirst(2).map(\.id))
        // Another model's embedding does not count as this one's.
        #expect(try workspace.chunksWithoutEmbedding(model: "other").count == chunks.count)

        let stored = try workspace.embeddings(model: "m", dimensions: 3)
        #expect(stored.map(\.id) == [chunks[0].id, chunks[1].id])
        #expect(stored.map(\.vector) == [[1, 2, 3], [0.5, -1, 0]])
        // A vector of another size does not read back as one of these.
        try workspace.storeEmbeddings([(chunks[2].id, [1, 2])], model: "m")
        #expect(try workspace.embeddings(model: "m", dimensions: 3).map(\.id) == [chunks[0].id, chunks[1].id])
    }

    @Test func anIndexIsStoredByKindAndReplaced() throws {
        let workspace = try TemporaryWorkspace.make("corpus")
        #expect(try workspace.storedIndex(kind: "bm25") == nil)
        let first = StoredIndex(kind: "bm25", paramsJSON: "{}", corpusStamp: "1:1:1", data: Data([1, 2, 3]))
        try workspace.storeIndex(first)
        #expect(try workspace.storedIndex(kind: "bm25") == first)
        let second = StoredIndex(kind: "bm25", paramsJSON: #"{"stem":true}"#, corpusStamp: "2:2:3", data: Data([4]))
        try workspace.storeIndex(second)
        #expect(try workspace.storedIndex(kind: "bm25") == second)
        #expect(try workspace.storedIndex(kind: "hnsw") == nil)
    }

    @Test func qrelsAreReplacedPerSourceAndTheLastLoadedIsTheDefault() throws {
        let workspace = try TemporaryWorkspace.make("qrels")
        #expect(try workspace.qrels() == nil)
        try workspace.replaceQrels(source: "a.trec", judgments: ["1": ["d1": 2, "d2": 1], "2": ["d3": 1]])
        try workspace.replaceQrels(source: "b.trec", judgments: ["7": ["d9": 1]])
        let latest = try #require(try workspace.qrels())
        #expect(latest.source == "b.trec" && latest.judgments == ["7": ["d9": 1]])
        let named = try #require(try workspace.qrels(source: "a.trec"))
        #expect(named.judgments == ["1": ["d1": 2, "d2": 1], "2": ["d3": 1]])
        #expect(try workspace.qrels(source: "missing.trec") == nil)

        // Loading a file of the same name again replaces its judgments rather than adding to them.
        try workspace.replaceQrels(source: "a.trec", judgments: ["1": ["d4": 1]])
        #expect(try workspace.qrels(source: "a.trec")?.judgments == ["1": ["d4": 1]])
        #expect(try workspace.qrels()?.source == "a.trec")
    }

    @Test func judgedQueriesComeNewestSourceFirst() throws {
        let workspace = try TemporaryWorkspace.make("qrels")
        try workspace.replaceQrelsQueries(source: "a.trec", queries: [("1", "wing lift"), ("2", "heat slabs")])
        try workspace.replaceQrelsQueries(source: "b.trec", queries: [("7", "boundary layer")])
        #expect(try workspace.judgedQueries().map(\.source) == ["b.trec", "a.trec", "a.trec"])
        try workspace.replaceQrelsQueries(source: "a.trec", queries: [("3", "shock waves")])
        let queries = try workspace.judgedQueries()
        #expect(queries.map(\.id) == ["3", "7"])
        #expect(queries.first?.text == "shock waves")
    }

    @Test func retrievalRecordsReadBackNewestFirstAndByID() throws {
        let workspace = try TemporaryWorkspace.make("records")
        let first = try workspace.recordRetrieval(query: "wing", retriever: "bm25", paramsJSON: "{}", hitsJSON: "[]")
        let second = try workspace.recordRetrieval(
            query: "heat", retriever: "hybrid", paramsJSON: #"{"k":5}"#, hitsJSON: #"[{"rank":1}]"#)
        #expect(try workspace.retrievalRecords().map(\.id) == [second, first])
        #expect(try workspace.retrievalRecords(limit: 1).map(\.query) == ["heat"])
        let one = try #require(try workspace.retrievalRecords(id: first).first)
        #expect(one.query == "wing" && one.retriever == "bm25" && one.hitsJSON == "[]")
        #expect(try workspace.retrievalRecords(id: 99).isEmpty)

        let eval = try workspace.recordRetrievalEval(
            retriever: "bm25", paramsJSON: "{}", queries: "queries.jsonl", qrelsSource: "a.trec",
            meanJSON: #"{"ndcg@10":0.4}"#, perQueryJSON: "{}")
        #expect(eval == 1)
        #expect(try workspace.info().tables.first { $0.name == "retrieval_evals" }?.rows == 1)
    }
}
