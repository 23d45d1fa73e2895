import Foundation
import LoupeAgents
import LoupeBase
import LoupeStore

/// Queues over steps (spans), sessions and retrieval hits: how they are drawn and what an
/// annotator sees of each.
extension ReviewService {
    /// A step with the trace it belongs to.
    package struct Step: Hashable, Sendable {
        package var traceID: Int64
        package var traceName: String
        package var span: TraceSpan
        /// The step's place among the trace's spans in time order (1-based) and their count.
        package var index: Int
        package var count: Int
    }

    /// A retrieval hit with the query it answered.
    package struct Hit: Hashable, Sendable {
        package var record: Int64
        package var query: String
        package var retriever: String
        /// Whether the ranking stemmed its terms (how the hit's matched terms are read).
        package var stem: Bool
        package var hit: RetrievalService.Hit
    }

    func drawSteps(_ source: ReviewSource) throws -> [ReviewItemRecord] {
        let service = TraceService(tables: traces)
        let ids = try source.trace.map { [$0] } ?? traces.traceSummaries().map(\.id)
        if let id = source.trace, try traces.traceSummary(id: id) == nil {
            throw ReviewError("no trace \(id) (loupe trace list)")
        }
        var items: [ReviewItemRecord] = []
        for id in ids {
            let trace = try service.trace(id)
            for span in trace.spans.sorted(by: { ($0.startNs, $0.spanID) < ($1.startNs, $1.spanID) }) {
                if let kind = source.spanKind, span.kind.rawValue != kind { continue }
                if source.errorsOnly, !span.status.isError { continue }
                if let name = source.name, !span.name.lowercased().contains(name) { continue }
                if let model = source.model, !(span.model ?? "").lowercased().contains(model) { continue }
                items.append(
                    ReviewItemRecord(
                        queueID: 0, position: 0, itemKey: "step:\(id)/\(span.spanID)", traceID: id,
                        refJSON: JSONValue.object([
                            "kind": "step", "trace": .number(Double(id)), "span": .string(span.spanID),
                        ]).compactJSON))
            }
        }
        return items
    }

    func drawSessions(_ source: ReviewSource) throws -> [ReviewItemRecord] {
        try TraceService(tables: traces).sessions().filter { session in
            let text = (session.id + " " + session.turns.map(\.name).joined(separator: " ")).lowercased()
            return source.words.allSatisfy(text.contains)
        }.map { session in
            ReviewItemRecord(
                queueID: 0, position: 0, itemKey: "session:\(session.id)", traceID: session.turns.first?.id,
                refJSON: JSONValue.object(["kind": "session", "session": .string(session.id)]).compactJSON)
        }
    }

    func drawHits(_ source: ReviewSource) throws -> [ReviewItemRecord] {
        var records: [Int64] = []
        if let record = source.record {
            records = [record]
        } else if let run = source.run {
            guard try evals.evalRun(run) != nil else { throw ReviewError("no eval run \(run) (loupe eval list)") }
            records = try evals.evalResults(run: run).compactMap(\.retrievalRecordID)
            guard !records.isEmpty else { throw ReviewError("run \(run)'s answers are not rankings: it has no hits") }
        }
        var items: [ReviewItemRecord] = []
        for id in records {
            let stored = try storedHits(id)
            for hit in stored.hits.prefix(source.depth) {
                items.append(
                    ReviewItemRecord(
                        queueID: 0, position: 0, itemKey: "hit:\(id)/\(hit.chunkID)", runID: source.run,
                        refJSON: JSONValue.object([
                            "kind": "hit", "record": .number(Double(id)), "chunk": .number(Double(hit.chunkID)),
                            "rank": .number(Double(hit.rank)),
                        ]).compactJSON))
            }
        }
        return items
    }

    /// A saved query's hits, as `retrieval show` reads them.
    func storedHits(_ id: Int64) throws -> (
        query: String, retriever: String, stem: Bool, hits: [RetrievalService.Hit]
    ) {
        guard let stored = try corpus.retrievalRecords(id: id, limit: 1).first else {
            throw ReviewError("no saved query \(id) (loupe retrieval list)")
        }
        let decoder = RetrievalService.recordDecoder()
        let row = "saved query \(id)"
        let hits = try decoder.decode(
            [RetrievalService.Hit].self, stored: stored.hitsJSON, "hits", row: row, column: "hits_json")
        // The stemming the query ran with: a setting that does not read back is said, not taken as off.
        let options = try decoder.decode(
            RetrievalService.Options.self, stored: stored.paramsJSON, "settings", row: row, column: "params_json")
        return (stored.query, stored.retriever, options.stem, hits)
    }

    /// An item's reference (`ref_json`: which step, session, hit or pair it stands for), parsed
    /// once per item read; one that does not read back names the queue, the item and the column.
    static func reference(of record: ReviewItemRecord, queue: String) throws(StoredValueError) -> JSONValue {
        try JSONValue.parse(
            stored: record.refJSON, "reference", row: "queue \(queue), item \(record.itemKey)", column: "ref_json")
    }

    /// `ref` when it is a reference of `kind`.
    static func reference(_ ref: JSONValue?, kind: String) -> JSONValue? {
        guard let ref, ref["kind"]?.string == kind else { return nil }
        return ref
    }

    func step(_ record: ReviewItemRecord, ref: JSONValue?) throws -> Step? {
        guard let ref = Self.reference(ref, kind: "step"), let traceID = record.traceID,
            let spanID = ref["span"]?.string
        else { return nil }
        let trace = try TraceService(tables: traces).trace(traceID)
        let ordered = trace.spans.sorted { ($0.startNs, $0.spanID) < ($1.startNs, $1.spanID) }
        guard let index = ordered.firstIndex(where: { $0.spanID == spanID }) else { return nil }
        return Step(
            traceID: traceID, traceName: trace.name, span: ordered[index], index: index + 1, count: ordered.count)
    }

    func session(ref: JSONValue?) throws -> TraceSession? {
        guard let ref = Self.reference(ref, kind: "session"), let id = ref["session"]?.string else { return nil }
        return try TraceService(tables: traces).session(id)
    }

    func hit(ref: JSONValue?) throws -> Hit? {
        guard let ref = Self.reference(ref, kind: "hit"), let id = ref["record"]?.number,
            let chunk = ref["chunk"]?.number
        else { return nil }
        let stored = try storedHits(Int64(id))
        guard let hit = stored.hits.first(where: { $0.chunkID == Int64(chunk) }) else { return nil }
        return Hit(record: Int64(id), query: stored.query, retriever: stored.retriever, stem: stored.stem, hit: hit)
    }
}
