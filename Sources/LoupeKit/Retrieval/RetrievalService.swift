import Foundation
import LoupeModels
import LoupeRetrieval
import LoupeStore

/// The retrieval engine on a workspace: ingest files into documents and chunks, keep the
/// indexes fresh, answer queries with every retriever's score and rank, evaluate against qrels.
package struct RetrievalService: Sendable {
    package enum Retriever: String, CaseIterable, Sendable, Codable {
        case bm25, dense, hybrid
    }

    /// The knobs of a query; stored with every retrieval record.
    package struct Options: Hashable, Sendable, Codable {
        package var retriever: Retriever = .hybrid
        package var k = 10
        package var k1 = 1.2
        package var b = 0.75
        package var stem = false
        /// RRF's k and each retriever's weight (BM25, dense).
        package var rrfK = 60.0
        package var weights = [1.0, 1.0]
        /// How many hits each retriever contributes to the fusion.
        package var depth = 100
        package var mmr = false
        package var mmrLambda: Float = 0.7
        /// Dense neighbours from the HNSW graph (`false`: exact search over every vector).
        package var approximate = true
        package var efSearch = 64

        package init() {}

        /// "hybrid · stem off · mmr off": the knobs a user switches, as the panel shows them.
        package var summary: String {
            "\(retriever.rawValue) · stem \(stem ? "on" : "off") · mmr \(mmr ? "on" : "off")"
                + (retriever == .bm25 ? "" : approximate ? "" : " · exact")
        }
    }

    /// A retriever's view of a hit.
    package struct Placement: Hashable, Sendable, Codable {
        package var score: Double
        package var rank: Int

        package init(score: Double, rank: Int) {
            self.score = score
            self.rank = rank
        }
    }

    package struct Hit: Hashable, Sendable, Codable {
        /// What a list shows for the hit: the section the chunk starts (a Markdown heading), then
        /// the document's title (`Install · Guide`: the section first, since a narrow column
        /// keeps the start), else the chunk's text.
        package var shownTitle: String {
            let heading = section ?? Self.heading(text)
            switch (title.isEmpty, heading) {
            case (true, nil): return text
            case (true, let heading?): return heading
            case (false, nil): return title
            case (false, let heading?): return heading == title ? title : heading + " · " + title
            }
        }

        /// The Markdown heading (`## Install` → `Install`) the text starts with, if any.
        package static func heading(_ text: String) -> String? {
            guard let heading = Chunker.markdownHeading(text.utf8.drop { $0 == 32 || $0 == 10 }), !heading.isEmpty
            else { return nil }
            return heading
        }

        package var rank: Int
        package var chunkID: Int64
        package var documentID: String
        package var title: String
        package var ordinal: Int
        package var startByte: Int
        package var endByte: Int
        package var text: String
        package var bm25: Placement?
        package var dense: Placement?
        /// The fused score and rank for hybrid; the retriever's own otherwise.
        package var fused: Placement
        package var matchedTerms: [String]
        package var contributions: [BM25Index.Contribution]
        /// The Markdown section the chunk is in (the heading of the chunk that began it), when
        /// its document has headings.
        package var section: String?

        package init(
            rank: Int, chunkID: Int64, documentID: String, title: String, ordinal: Int, startByte: Int, endByte: Int,
            text: String, bm25: Placement?, dense: Placement?, fused: Placement, matchedTerms: [String],
            contributions: [BM25Index.Contribution]
        ) {
            self.rank = rank
            self.chunkID = chunkID
            self.documentID = documentID
            self.title = title
            self.ordinal = ordinal
            self.startByte = startByte
            self.endByte = endByte
            self.text = text
            self.bm25 = bm25
            self.dense = dense
            self.fused = fused
            self.matchedTerms = matchedTerms
            self.contributions = contributions
        }
    }

    package struct IngestReport: Hashable, Sendable, Codable {
        package var files = 0
        package var unchanged = 0
        package var documents = 0
        package var chunks = 0
        package var embedded = 0
        package var warnings: [String] = []
        /// Files left out whole (unreadable, binary, not UTF-8).
        package var skippedFiles = 0
        /// Malformed JSONL lines left out of files that were stored.
        package var skippedLines = 0
    }

    /// The corpus, its indexes, judgments and saved runs, on the workspace's backend.
    package let corpus: CorpusTables
    /// Where the corpus's precision is kept.
    let settings: SettingsTables
    let models: ModelLibrary
    package static let dimensions = 384
    /// The setting that holds the precision the corpus is embedded at.
    static let precisionSetting = "retrieval.embedding_precision"

    /// The name embeddings made at `precision` are stored under: the model's, and ` int8` after
    /// it for int8, so that vectors of the two precisions are never mixed in one index.
    package static func embeddingModel(_ precision: Precision) -> String {
        precision == .fp32 ? ModelLibrary.miniLMName : ModelLibrary.miniLMName + " " + precision.rawValue
    }

    /// The precision the corpus is embedded at, which queries are embedded at too: what the last
    /// `ingest --precision` chose, fp32 until one did.
    package static func precision(of database: any SQLDatabase) throws -> Precision {
        try SettingsTables(database).setting(precisionSetting).flatMap(Precision.init(rawValue:)) ?? .fp32
    }

    /// The name the corpus's embeddings are stored under (``embeddingModel(_:)`` at its precision).
    package static func embeddingModel(of database: any SQLDatabase) throws -> String {
        embeddingModel(try precision(of: database))
    }

    package func precision() throws -> Precision { try Self.precision(of: corpus.database) }
    package func embeddingModel() throws -> String { try Self.embeddingModel(of: corpus.database) }

    /// The service on a workspace's tables: a SQLite ``Workspace`` or a PostgreSQL workspace.
    package init(database: any SQLDatabase, models: ModelLibrary) {
        corpus = CorpusTables(database)
        settings = SettingsTables(database)
        self.models = models
    }

    package init(workspace: Workspace, models: ModelLibrary) {
        self.init(database: workspace, models: models)
    }
}
