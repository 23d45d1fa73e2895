import Foundation
import GRDB
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupePostgres
import LoupeStore
import LoupeTestSupport
import Testing

/// A trace that grows over many receiver requests (reliability finding F-3): appended span by
/// span, it is stored as the same trace imported whole, each request writes what its own spans
/// are, and two receivers adding to one trace lose nothing.
@Suite(.serialized) struct GrowingTraceTests {
    static let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"

    /// `count` spans of one agent run: a root, model calls with tokens, costs and three models,
    /// tool calls (a few failing) and untyped spans, three levels deep; span 0 is the root.
    /// With `growing`, start times grow with the index and the last span is the root's last
    /// child, as in a long agent run still being exported: it belongs at the end of tree order.
    static func spans(
        _ count: Int, traceID: String = traceID, payload: Int = 40, growing: Bool = false
    ) throws -> [OTLPImporter.OTLPSpan] {
        var spans: [String] = []
        let filler = String(repeating: "x", count: payload)
        for i in 0..<count {
            let parent =
                i == 0
                ? "" : String(format: "%016x", i < 8 || (growing && i == count - 1) ? 1 : 1 + (i * 7919) % min(i, 64))
            var attributes: [String] = ["{\"key\":\"note\",\"value\":{\"stringValue\":\"\(filler)\(i)\"}}"]
            switch i % 4 {
            case 0 where i == 0:
                attributes.append("{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"invoke_agent\"}}")
                attributes.append("{\"key\":\"session.id\",\"value\":{\"stringValue\":\"chat-7\"}}")
            case 1:
                attributes += [
                    "{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"chat\"}}",
                    "{\"key\":\"gen_ai.request.model\",\"value\":{\"stringValue\":\"model-\(i % 3)\"}}",
                    "{\"key\":\"gen_ai.usage.input_tokens\",\"value\":{\"intValue\":\"\(10 + i)\"}}",
                    "{\"key\":\"gen_ai.usage.output_tokens\",\"value\":{\"intValue\":\"\(i % 17)\"}}",
                    "{\"key\":\"gen_ai.usage.cost\",\"value\":{\"doubleValue\":\(Double(i) * 0.000_137)}}",
                ]
            case 2:
                attributes.append("{\"key\":\"gen_ai.tool.name\",\"value\":{\"stringValue\":\"search\"}}")
            default: break
            }
            let status = i % 37 == 5 ? ",\"status\":{\"code\":2,\"message\":\"boom \(i)\"}" : ""
            // Start times shuffled against ids, some equal, so sibling order is by time.
            let shuffled = Int64((i * 7_368_787) % 1_000_003) * 1_000 + (i == 0 ? -10_000_000_000 : 0)
            let start = 1_700_000_000_000_000_000 + (growing ? Int64(i) * 1_000_000 : shuffled)
            spans.append(
                """
                {"traceId":"\(traceID)","spanId":"\(String(format: "%016x", i + 1))",\
                "parentSpanId":"\(parent)","name":"span \(i)","startTimeUnixNano":"\(start)",\
                "endTimeUnixNano":"\(start + Int64(i % 5) * 1_000_000)","attributes":[\(attributes.joined(separator: ","))]\(status)}
                """)
        }
        let body = """
            {"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"agent"}}]},\
            "scopeSpans":[{"spans":[\(spans.joined(separator: ","))]}]}]}
            """
        let read = try OTLPImporter.spans(in: try JSONValue.parse(body), file: "test", line: nil)
        #expect(read.rejected.isEmpty)
        return read.read
    }

    /// Everything a view of a trace reads: its summary (less id and time), rows, payloads,
    /// sources, scores, metadata and model usage, and the trace as `trace show` reads it.
    struct Stored: Equatable {
        var summary: TraceSummary
        var rows: [SpanRow]
        var payloads: [StoredPayload]
        var scores: [NewTrace.ScoreRecord]
        var metadata: String?
        var usage: [ModelUsage]
        var trace: Trace

        init(_ tables: TraceTables) throws {
            let list = try tables.traceSummaries()
            try #require(list.count == 1)
            summary = list[0]
            let id = summary.id
            summary.id = 0
            summary.importedAt = Date(timeIntervalSince1970: 0)
            rows = try tables.spanRows(trace: id)
            payloads = try tables.spanPayloads(trace: id)
            scores = try tables.traceScores(trace: id)
            metadata = try tables.traceMetadata(trace: id)
            usage = try tables.modelUsage().map {
                var usage = $0
                usage.trace = 0
                return usage
            }
            trace = try TraceService(tables: tables).trace(id)
        }
    }

    static func rounded(_ usage: ModelUsage) -> ModelUsage {
        var usage = usage
        usage.cost = usage.cost.map { ($0 * 1e9).rounded() / 1e9 }
        return usage
    }

    static func workspace(_ label: String) throws -> Workspace {
        try Workspace(path: TestEnvironment.temporaryDirectory() + "/\(label).sqlite", busyTimeout: 30)
    }

    /// Submits `batches` one after the other, each acknowledged before the next.
    static func ingest(_ batches: [[OTLPImporter.OTLPSpan]], into tables: TraceTables) async throws {
        let ingest = TraceIngest(tables: tables)
        for batch in batches { try await ingest.submit(batch, source: "OTLP/HTTP") }
        ingest.drain()
    }

    /// The spans in batches in the order an exporter sends them (each span as it ends:
    /// children first, the root last), plus a resent request and a span sent again.
    static func batches(_ spans: [OTLPImporter.OTLPSpan], size: Int) -> [[OTLPImporter.OTLPSpan]] {
        let arrival = Array(spans.dropFirst().reversed()) + [spans[0]]
        var batches = stride(from: 0, to: arrival.count, by: size).map {
            Array(arrival[$0..<min(arrival.count, $0 + size)])
        }
        batches.insert(batches[1], at: 3)
        batches.append([spans[5], spans[6]])
        return batches
    }

    func checkBatchesMatchOneImport(_ make: (String) throws -> TraceTables) async throws {
        let spans = try Self.spans(400)
        let whole = try make("whole")
        try await Self.ingest([spans], into: whole)
        for size in [1, 7, 150] {
            let grown = try make("grown\(size)")
            try await Self.ingest(Self.batches(spans, size: size), into: grown)
            let expected = try Stored(whole)
            let got = try Stored(grown)
            #expect(got.summary == expected.summary, "batches of \(size)")
            #expect(got.rows == expected.rows, "batches of \(size)")
            #expect(got.payloads == expected.payloads, "batches of \(size)")
            #expect(got.scores == expected.scores, "batches of \(size)")
            #expect(got.metadata == expected.metadata, "batches of \(size)")
            // Summed by the database in its row order: PostgreSQL's heap order may differ by a
            // last bit of a cost between two tables holding the same rows.
            #expect(got.usage.map(Self.rounded) == expected.usage.map(Self.rounded), "batches of \(size)")
            #expect(got.trace == expected.trace, "batches of \(size)")
        }
        let summary = try Stored(whole).summary
        #expect(summary.spanCount == 400)
        #expect(summary.name == "span 0")
        #expect(summary.sessionID == "chat-7")
        #expect(summary.awaitingParents == 0)
        #expect(summary.errorCount > 0 && summary.inputTokens ?? 0 > 0 && summary.cost ?? 0 > 0)
    }

    /// Trace tables on a fresh database of the shared PostgreSQL cluster, named `prefix-label-…`.
    static func postgresTables(_ prefix: String) -> (String) throws -> TraceTables {
        { label in
            let cluster = try PostgresCluster.shared
            let url = try PostgresURL(
                cluster.url(try cluster.database("\(prefix)-\(label)-\(UUID().uuidString.prefix(8))")), environment: [:]
            )
            return TraceTables(try PostgresStore.open(url))
        }
    }

    @Test func spansAppendedInBatchesStoreTheTraceImportedWholeOnSQLite() async throws {
        try await checkBatchesMatchOneImport { TraceTables(try Self.workspace($0)) }
    }

    @Test func spansAppendedInBatchesStoreTheTraceImportedWholeOnPostgreSQL() async throws {
        try await checkBatchesMatchOneImport(Self.postgresTables("grow"))
    }

    /// Spans sent in tree order (each after its parent and its earlier siblings) each land after
    /// every stored span, the path that moves the summary on instead of reading the trace: the
    /// trace is still the one imported whole, and so after a span sent again and a late parent.
    func checkSpansInTreeOrderMatchOneImport(_ make: (String) throws -> TraceTables) async throws {
        let spans = try Self.spans(300)
        let whole = try make("whole")
        try await Self.ingest([spans], into: whole)
        let expected = try Stored(whole)
        let place = Dictionary(uniqueKeysWithValues: expected.rows.map { ($0.spanID, $0.ordinal) })
        let inOrder = spans.sorted { place[$0.span.spanID]! < place[$1.span.spanID]! }
        for size in [1, 7] {
            let grown = try make("ordered\(size)")
            // Span 5 held back, so that its children wait for it until it comes last.
            let held = spans[5].span.spanID
            let sent = inOrder.filter { $0.span.spanID != held } + [spans[5], spans[9]]
            try await Self.ingest(
                stride(from: 0, to: sent.count, by: size).map { Array(sent[$0..<min(sent.count, $0 + size)]) },
                into: grown)
            let got = try Stored(grown)
            #expect(got.summary == expected.summary, "batches of \(size)")
            #expect(got.rows == expected.rows, "batches of \(size)")
            #expect(got.payloads == expected.payloads, "batches of \(size)")
            #expect(got.scores == expected.scores, "batches of \(size)")
            #expect(got.metadata == expected.metadata, "batches of \(size)")
            #expect(got.usage.map(Self.rounded) == expected.usage.map(Self.rounded), "batches of \(size)")
            #expect(got.trace == expected.trace, "batches of \(size)")
        }
    }

    @Test func spansSentInTreeOrderStoreTheTraceImportedWholeOnSQLite() async throws {
        try await checkSpansInTreeOrderMatchOneImport { TraceTables(try Self.workspace($0)) }
    }

    @Test func spansSentInTreeOrderStoreTheTraceImportedWholeOnPostgreSQL() async throws {
        try await checkSpansInTreeOrderMatchOneImport(Self.postgresTables("order"))
    }

    @Test func aTraceStillArrivingSaysHowManySpansAwaitTheirParent() async throws {
        let spans = try Self.spans(50)
        let tables = TraceTables(try Self.workspace("w"))
        // Everything but the root, children first: the root's children wait for it.
        let children = Array(spans.dropFirst().reversed())
        try await Self.ingest(
            stride(from: 0, to: 49, by: 5).map { Array(children[$0..<min(49, $0 + 5)]) }, into: tables)
        let waiting = try #require(try tables.traceSummaries().first)
        let rootID = spans[0].span.spanID
        #expect(waiting.awaitingParents == spans.filter { $0.span.parentID == rootID }.count)
        #expect(waiting.awaitingParents >= 7)
        #expect(waiting.spanCount == 49)
        try await Self.ingest([[spans[0]]], into: tables)
        #expect(try tables.traceSummaries().first?.awaitingParents == 0)
        #expect(try tables.spanRows(trace: waiting.id).first?.spanID == spans[0].span.spanID)
    }

    /// Two receivers (two processes' worth: each its own workspace connection and ingest) add
    /// spans of one trace at once: every span is stored.
    @Test func twoReceiversAddingToOneTraceLoseNothing() async throws {
        let path = TestEnvironment.temporaryDirectory() + "/shared.sqlite"
        try await checkTwoReceivers {
            TraceTables(try Workspace(path: path, busyTimeout: 60))
        }
    }

    /// The same on PostgreSQL: two connections, each with its ingest, on one database.
    @Test func twoReceiversAddingToOneTraceLoseNothingOnPostgreSQL() async throws {
        let cluster = try PostgresCluster.shared
        let url = try PostgresURL(
            cluster.url(try cluster.database("grow-two-\(UUID().uuidString.prefix(8))")), environment: [:])
        try await checkTwoReceivers { TraceTables(try PostgresStore.open(url)) }
    }

    func checkTwoReceivers(_ open: () throws -> TraceTables) async throws {
        let spans = try Self.spans(600)
        let first = TraceIngest(tables: try open())
        let second = TraceIngest(tables: try open())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, ingest) in [first, second].enumerated() {
                group.addTask {
                    for i in stride(from: n, to: spans.count, by: 2) {
                        try await ingest.submit([spans[i]], source: "OTLP/HTTP")
                    }
                }
            }
            try await group.waitForAll()
        }
        first.drain()
        second.drain()
        let tables = try open()
        let summary = try #require(try tables.traceSummaries().first)
        #expect(summary.spanCount == 600)
        let rows = try tables.spanRows(trace: summary.id)
        #expect(Set(rows.map(\.spanID)) == Set(spans.map(\.span.spanID)))
        #expect(rows.map(\.ordinal) == Array(0..<600))
        let whole = TraceTables(try Self.workspace("whole"))
        try await Self.ingest([spans], into: whole)
        #expect(try Stored(tables).rows == Stored(whole).rows)
        #expect(try Stored(tables).summary.spanCount == 600)
    }

    /// The rows SQLite changed on the writer's connection (`total_changes()`: inserts, updates
    /// and deletes, triggers' included).
    static func changes(_ workspace: Workspace) throws -> Int {
        try workspace.write { db in try Int.fetchOne(db, sql: "SELECT total_changes()") ?? 0 }
    }

    /// One span into a 5,000-span trace writes a few rows, not the trace: counted, not timed.
    @Test func oneSpanIntoALargeTraceWritesAFewRows() async throws {
        let spans = try Self.spans(5_001, growing: true)
        let workspace = try Self.workspace("w")
        let tables = TraceTables(workspace)
        let ingest = TraceIngest(tables: tables)
        try await ingest.submit(Array(spans[0..<5_000]), source: "OTLP/HTTP")
        let before = try Self.changes(workspace)
        try await ingest.submit([spans[5_000]], source: "OTLP/HTTP")
        let written = try Self.changes(workspace) - before
        // The span row, the trace's row and its revision stamp, its model usage.
        #expect(written <= 12, "one span into a 5,000-span trace changed \(written) rows")
        // Sent again: nothing at all.
        let again = try Self.changes(workspace)
        try await ingest.submit([spans[5_000]], source: "OTLP/HTTP")
        #expect(try Self.changes(workspace) == again)
        ingest.drain()
        #expect(try tables.traceSummaries().first?.spanCount == 5_001)
    }
}
