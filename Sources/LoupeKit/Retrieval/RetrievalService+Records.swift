import Foundation
import LoupeRetrieval
import LoupeStore

extension RetrievalService {
    /// A saved query run read back: its query, options and hits as they were.
    package struct Record: Hashable, Sendable {
        package var id: Int64
        package var query: String
        package var options: Options
        package var hits: [Hit]
        package var createdAt: Date
    }

    /// How two saved runs of the same corpus differ: the documents each found, and per chunk
    /// its rank in each (nil: not in that run's list).
    package struct RecordComparison: Hashable, Sendable, Codable {
        package struct Row: Hashable, Sendable, Codable {
            package var chunkID: Int64
            package var documentID: String
            package var ordinal: Int
            package var title: String
            package var rankA: Int?
            package var rankB: Int?
            /// Places gained from A to B (positive: moved up).
            package var movement: Int? { rankA.flatMap { a in rankB.map { a - $0 } } }
        }
        package var a: Int64
        package var b: Int64
        package var rows: [Row]
        package var overlap: Int { rows.filter { $0.rankA != nil && $0.rankB != nil }.count }
        /// Jaccard similarity of the two runs' chunk sets.
        package var jaccard: Double {
            rows.isEmpty ? 1 : Double(overlap) / Double(rows.count)
        }
    }

    private static let recordEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    /// Saves a query run so it can be reopened and compared; returns its id.
    @discardableResult
    package func record(_ query: String, options: Options, hits: [Hit]) throws -> Int64 {
        try corpus.recordRetrieval(
            query: query, retriever: options.retriever.rawValue,
            paramsJSON: String(decoding: try Self.recordEncoder.encode(options), as: UTF8.self),
            hitsJSON: String(decoding: try Self.recordEncoder.encode(hits), as: UTF8.self))
    }

    /// Reads what `record` wrote: snake_case back to Swift's names, where an acronym stays
    /// upper-case (chunk_id → chunkID).
    package static func recordDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom { path in
            let parts = path.last!.stringValue.split(separator: "_")
            let name = parts.enumerated().map { index, part in
                index == 0 ? String(part) : part == "id" ? "ID" : part.prefix(1).uppercased() + part.dropFirst()
            }.joined()
            return AnyKey(name)
        }
        return decoder
    }

    /// Saved runs, newest first (`id`: that one, or a failure naming it).
    package func records(id: Int64? = nil, limit: Int = 50) throws -> [Record] {
        let decoder = Self.recordDecoder()
        let stored = try corpus.retrievalRecords(id: id, limit: limit)
        if let id, stored.isEmpty {
            throw RetrievalError("no retrieval record \(id) (loupe retrieval records lists them)")
        }
        // A column that does not read back names the record and the column, and what in it.
        return try stored.map { row throws(StoredValueError) in
            let name = "retrieval record \(row.id)"
            return Record(
                id: row.id, query: row.query,
                options: try decoder.decode(
                    Options.self, stored: row.paramsJSON, "settings", row: name, column: "params_json"),
                hits: try decoder.decode([Hit].self, stored: row.hitsJSON, "hits", row: name, column: "hits_json"),
                createdAt: row.createdAt)
        }
    }

    /// Every chunk either run found, in A's order then B's newcomers, with both ranks.
    package func compare(_ a: Int64, _ b: Int64) throws -> RecordComparison {
        let (first, second) = (try records(id: a)[0], try records(id: b)[0])
        let rankB = Dictionary(second.hits.map { ($0.chunkID, $0.rank) }, uniquingKeysWith: min)
        var rows = first.hits.map {
            RecordComparison.Row(
                chunkID: $0.chunkID, documentID: $0.documentID, ordinal: $0.ordinal, title: $0.title, rankA: $0.rank,
                rankB: rankB[$0.chunkID])
        }
        let inA = Set(first.hits.map(\.chunkID))
        rows += second.hits.filter { !inA.contains($0.chunkID) }.map {
            RecordComparison.Row(
                chunkID: $0.chunkID, documentID: $0.documentID, ordinal: $0.ordinal, title: $0.title, rankA: nil,
                rankB: $0.rank)
        }
        return RecordComparison(a: a, b: b, rows: rows)
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
