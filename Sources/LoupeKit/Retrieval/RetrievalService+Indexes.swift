import Foundation
import LoupeModels
import LoupeRetrieval
import LoupeStore

extension RetrievalService {
    /// The chunks and a BM25 index over them: the stored BLOB when it was built from the same
    /// chunks with the same tokenisation and reads back whole, else rebuilt and stored.
    package func bm25(stem: Bool) throws -> (chunks: [StoredChunk], index: BM25Index, rebuilt: Bool) {
        let chunks = try corpus.chunks()
        let stamp = try corpus.corpusStamp()
        let kind = stem ? "bm25-porter" : "bm25"
        if let stored = try corpus.storedIndex(kind: kind), stored.corpusStamp == stamp,
            let index = BM25Index(serialized: stored.data), index.documentCount == chunks.count
        {
            return (chunks, index, false)
        }
        let tokenizer = RetrievalTokenizer(stem: stem)
        let index = BM25Index(documents: chunks.map { tokenizer.terms($0.text) })
        try corpus.storeIndex(
            StoredIndex(
                kind: kind, paramsJSON: "{\"stem\":\(stem),\"stopwords\":\"lucene-english-33\"}", corpusStamp: stamp,
                data: index.serialized()))
        return (chunks, index, true)
    }

    /// Exact cosine search over every chunk's MiniLM embedding (embedding missing ones first).
    package func flatIndex(chunks: [StoredChunk]) throws -> FlatIndex {
        try embedMissing()
        let stored = try corpus.embeddings(model: try embeddingModel(), dimensions: Self.dimensions)
        let byID = Dictionary(stored.map { ($0.id, $0.vector) }, uniquingKeysWith: { a, _ in a })
        var index = FlatIndex(dimensions: Self.dimensions)
        for chunk in chunks {
            guard let vector = byID[chunk.id] else {
                throw RetrievalError("chunk \(chunk.id) has no usable embedding; run loupe ingest again")
            }
            index.add(vector)
        }
        return index
    }
}
