import Foundation
import GRDB
import LoupePostgres
import LoupeStore
import Testing

/// Traces written with the Store's own record types and read back: what the Traces panel and
/// `trace import` rely on. Every case runs on SQLite and on a real PostgreSQL server.
@Suite struct WorkspaceTracesTests {
    private func tables(_ backend: StoreBackend, _ label: String) throws -> TraceTables {
        TraceTables(try backend.database("traces_\(label)"))
    }

    /// How many rows `table` holds.
    private func count(_ table: String, in tables: TraceTables) throws -> Int64? {
        try tables.database.readStatements { sql in
            try sql.execute("SELECT COUNT(*) AS n FROM \(table)").first?.integer("n")
        }
    }

    static let importedAt = Date(timeIntervalSince1970: 1_767_225_600)

    static func span(
        _ ordinal: Int, _ name: String, kind: String = "llm", parent: String? = nil, status: String = "ok",
        message: String? = nil, model: String? = nil, tool: String? = nil, tokens: (Int, Int)? = nil,
        cost: Double? = nil, payload: String = "{}"
    ) -> NewTrace.SpanRecord {
        NewTrace.SpanRecord(
            row: SpanRow(
                ordinal: ordinal, spanID: "s\(ordinal)", parentSpanID: parent, kind: kind, name: name,
                startNs: Int64(ordinal) * 1_000, endNs: Int64(ordinal) * 1_000 + 500, status: status,
                statusMessage: message, model: model, inputTokens: tokens?.0, outputTokens: tokens?.1,
                cacheReadTokens: nil, cacheWriteTokens: nil, reasoningTokens: nil, cost: cost, toolName: tool),
            payloadJSON: payload, rawZstd: nil)
    }

    /// A three-span agent run: a model call, a failing calculator call, a second model call.
    static func trace(_ externalID: String = "run-1", hash: String = "h1", answer: String = "42") -> NewTrace {
        let spans = [
            span(0, "agent", kind: "agent"),
            span(
                1, "chat gpt-4o-mini", parent: "s0", model: "gpt-4o-mini", tokens: (100, 10),
                payload: #"{"output":[{"role":"assistant","text":"grow 50% faster, see fig_2"}]}"#),
            span(
                2, "calculator", kind: "tool", parent: "s0", status: "error", message: "division by zero",
                tool: "calculator", payload: #"{"tool":{"name":"calculator","arguments":"{\"expression\":\"7 / 0\"}"}}"#
            ),
            span(
                3, "chat gpt-4o-mini", parent: "s0", model: "gpt-4o-mini", tokens: (120, 5), cost: 0.001,
                payload: #"{"output":[{"role":"assistant","text":"\#(answer)"}]}"#),
        ]
        return NewTrace(
            summary: TraceSummary(
                id: 0, externalID: externalID, format: "loupe", sourceFile: "run.jsonl", name: "arith",
                startedNs: 0, endedNs: 3_500, timed: true, spanCount: spans.count, stepCount: 3, errorCount: 1,
                inputTokens: 220, outputTokens: 15, cost: nil, parentTraceID: nil, forkOrdinal: nil,
                importedAt: importedAt),
            metadataJSON: #"{"task":"arith"}"#, contentHash: hash, spans: spans,
            scores: [NewTrace.ScoreRecord(scorer: "match", valueJSON: #""C""#, answer: answer, explanation: nil)])
    }

    /// Live: received, a span still waiting for its parent, and the last within the window of now.
    @Test func aTraceIsLiveWhileReceivedIncompleteAndRecent() {
        let at = Date(timeIntervalSince1970: 1_767_225_700)
        var received = TraceSummary(
            id: 1, externalID: "t", format: "otlp", sourceFile: "OTLP/HTTP", name: "agent", startedNs: 0, endedNs: 1,
            timed: true, spanCount: 1, stepCount: 1, errorCount: 0, inputTokens: nil, outputTokens: nil, cost: nil,
            parentTraceID: nil, forkOrdinal: nil, importedAt: at, awaitingParents: 1)
        #expect(received.isLive(now: at.addingTimeInterval(TraceSummary.liveWindow - 1)))
        #expect(!received.isLive(now: at.addingTimeInterval(TraceSummary.liveWindow + 1)))
        #expect(received.isLive(now: at.addingTimeInterval(3_600), window: .infinity))
        received.awaitingParents = 0
        #expect(!received.isLive(now: at))
        received.awaitingParents = 1
        received.sourceFile = "run.jsonl"
        #expect(!received.isLive(now: at))
    }

    @Test(arguments: StoreBackend.allCases) func anImportedTraceReadsBackWithItsSpansScoresAndMetadata(
        _ backend: StoreBackend
    ) throws {
        let workspace = try tables(backend, "read")
        let counts = try workspace.importTraces([Self.trace()])
        #expect(counts.added == 1 && counts.replaced == 0 && counts.unchanged == 0)
        let id = try #require(counts.ids.first)

        let summaries = try workspace.traceSummaries()
        #expect(summaries.count == 1)
        let summary = try #require(try workspace.traceSummary(id: id))
        #expect(summary == summaries[0])
        #expect(summary.name == "arith" && summary.spanCount == 4 && summary.errorCount == 1)
        #expect(summary.durationNs == 3_500 && summary.importedAt == Self.importedAt)
        #expect(try workspace.traceSummary(id: id + 1) == nil)

        let rows = try workspace.spanRows(trace: id)
        #expect(rows == Self.trace().spans.map(\.row))
        #expect(try workspace.traceScores(trace: id) == Self.trace().scores)
        #expect(try workspace.traceMetadata(trace: id) == #"{"task":"arith"}"#)

        let payload = try #require(try workspace.spanPayload(trace: id, ordinal: 3))
        #expect(payload.payload.contains("42") && payload.rawJSON == nil && payload.rawZstd == nil)
        #expect(try workspace.spanPayload(trace: id, ordinal: 9) == nil)
        #expect(try workspace.spanPayloads(trace: id).map(\.payload) == Self.trace().spans.map(\.payloadJSON))
    }

    /// A trace being recorded holds its lease from the transaction that creates it, so a kill
    /// at any moment leaves either no trace or one a later run can see was interrupted.
    @Test(arguments: StoreBackend.allCases) func aNewTraceCanBeLeasedInTheTransactionThatAddsIt(_ backend: StoreBackend)
        throws
    {
        let workspace = try tables(backend, "lease")
        let id = try #require(
            try workspace.importTraces([Self.trace()], leaseKind: JobLease.Kind.agentTrace).ids.first)
        func lease(_ id: Int64) throws -> JobLease? {
            try workspace.database.readStatements { sql in
                try sql.fetch(
                    JobLease.self, "SELECT * FROM job_leases WHERE kind = ? AND target_id = ?",
                    [.text(JobLease.Kind.agentTrace), .integer(id)]
                ).first
            }
        }
        #expect(try lease(id)?.isMine == true)
        // Plain imports take none.
        let other = try #require(try workspace.importTraces([Self.trace("run-2")]).ids.first)
        #expect(try lease(other) == nil)
    }

    @Test(arguments: StoreBackend.allCases) func reimportingTheSameContentChangesNothingAndNewContentReplacesInPlace(
        _ backend: StoreBackend
    ) throws {
        let workspace = try tables(backend, "reimport")
        let first = try workspace.importTraces([Self.trace()])
        let again = try workspace.importTraces([Self.trace()])
        #expect(again.unchanged == 1 && again.added == 0 && again.ids == first.ids)
        #expect(try workspace.traceSummaries().count == 1)

        let changed = try workspace.importTraces([Self.trace(hash: "h2", answer: "43")])
        #expect(changed.replaced == 1 && changed.ids == first.ids)
        let id = try #require(first.ids.first)
        // The spans and scores are the new ones, not the old ones beside them.
        #expect(try workspace.spanRows(trace: id).count == 4)
        #expect(try workspace.traceScores(trace: id).map(\.answer) == ["43"])
        #expect(try workspace.spanPayload(trace: id, ordinal: 3)?.payload.contains("43") == true)

        // Another external id is another trace.
        let other = try workspace.importTraces([Self.trace("run-2")])
        #expect(other.added == 1 && other.ids != first.ids)
        #expect(try workspace.traceSummaries().map(\.externalID) == ["run-1", "run-2"])
    }

    @Test(arguments: StoreBackend.allCases) func aFailingImportLeavesNoTraceBehind(_ backend: StoreBackend) throws {
        let workspace = try tables(backend, "fail")
        var broken = Self.trace("run-2")
        // Two spans with one ordinal break the spans' primary key half way through the batch.
        broken.spans.append(broken.spans[0])
        #expect(throws: WorkspaceError.self) { try workspace.importTraces([Self.trace(), broken]) }
        #expect(try workspace.traceSummaries().isEmpty)
        #expect(try count("spans", in: workspace) == 0)
        #expect(try count("trace_scores", in: workspace) == 0)
    }

    @Test(arguments: StoreBackend.allCases) func searchFindsSpansByNameToolModelErrorAndContentIgnoringCase(
        _ backend: StoreBackend
    ) throws {
        let workspace = try tables(backend, "search")
        let id = try #require(try workspace.importTraces([Self.trace()]).ids.first)
        #expect(try workspace.searchSpans(trace: id, text: "CALCULATOR") == [2])
        #expect(try workspace.searchSpans(trace: id, text: "gpt-4o") == [1, 3])
        #expect(try workspace.searchSpans(trace: id, text: "division by zero") == [2])
        #expect(try workspace.searchSpans(trace: id, text: "faster") == [1])
        #expect(try workspace.searchSpans(trace: id, text: "photosynthesis").isEmpty)
        #expect(try workspace.searchSpans(trace: id + 1, text: "calculator").isEmpty)
    }

    @Test(arguments: StoreBackend.allCases) func searchTakesPercentUnderscoreAndBackslashLiterally(
        _ backend: StoreBackend
    ) throws {
        let workspace = try tables(backend, "literal")
        let id = try #require(try workspace.importTraces([Self.trace()]).ids.first)
        // Unescaped, "%" and "_" would be LIKE wildcards and match every span.
        #expect(try workspace.searchSpans(trace: id, text: "50%") == [1])
        #expect(try workspace.searchSpans(trace: id, text: "%") == [1])
        #expect(try workspace.searchSpans(trace: id, text: "_") == [1])
        #expect(try workspace.searchSpans(trace: id, text: "fig_2") == [1])
        #expect(try workspace.searchSpans(trace: id, text: "gpt_4o").isEmpty)
        // The payload's JSON escapes its inner quotes with a backslash.
        #expect(try workspace.searchSpans(trace: id, text: #"\"7 / 0\""#) == [2])
        #expect(try workspace.searchSpans(trace: id, text: #"\x"#).isEmpty)
    }

    @Test(arguments: StoreBackend.allCases) func pricesAreSetReplacedAndRemoved(_ backend: StoreBackend) throws {
        let workspace = try tables(backend, "prices")
        #expect(try workspace.modelPrices().isEmpty)
        try workspace.setModelPrices([
            ModelPrice(
                model: "gpt-4o-mini", inputPerMTok: 0.15, outputPerMTok: 0.6, cachedInputPerMTok: nil, source: "a"),
            ModelPrice(model: "claude", inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3, source: "a"),
        ])
        try workspace.setModelPrices([
            ModelPrice(
                model: "gpt-4o-mini", inputPerMTok: 0.2, outputPerMTok: 0.8, cachedInputPerMTok: 0.1, source: "b")
        ])
        let prices = try workspace.modelPrices()
        #expect(prices.map(\.model) == ["claude", "gpt-4o-mini"])
        #expect(prices[1].inputPerMTok == 0.2 && prices[1].cachedInputPerMTok == 0.1 && prices[1].source == "b")
        #expect(try workspace.removeModelPrice("claude"))
        #expect(try !workspace.removeModelPrice("claude"))
        #expect(try workspace.modelPrices().map(\.model) == ["gpt-4o-mini"])
    }

    @Test(arguments: StoreBackend.allCases) func modelUsageSumsEachTracesModelCalls(_ backend: StoreBackend) throws {
        let workspace = try tables(backend, "usage")
        let id = try #require(try workspace.importTraces([Self.trace()]).ids.first)
        let usage = try workspace.modelUsage()
        // The agent and tool spans are not model calls.
        #expect(usage.count == 1)
        let calls = try #require(usage.first)
        #expect(calls.trace == id && calls.model == "gpt-4o-mini" && calls.calls == 2)
        #expect(calls.inputTokens == 220 && calls.outputTokens == 15 && calls.cacheReadTokens == nil)
        #expect(calls.cost == 0.001 && calls.costed == 1)
    }

    /// A long received trace: more spans than one PostgreSQL statement takes, each with its
    /// source compressed, read back in order and put together again from the stored sources.
    @Test(arguments: StoreBackend.allCases) func aLongTraceWithSourcesReadsBackWhole(_ backend: StoreBackend) throws {
        let workspace = try tables(backend, "long")
        var trace = Self.trace("long-run")
        trace.summary.format = "otlp"
        trace.spans = (0..<2_500).map { ordinal in
            var span = Self.span(ordinal, "step \(ordinal)", parent: ordinal == 0 ? nil : "s0")
            span.rawZstd = Data("source \(ordinal) \u{e9}\u{1F600}".utf8) + Data([0, 255, 0])
            return span
        }
        trace.summary.spanCount = trace.spans.count
        let id = try #require(try workspace.importTraces([trace]).ids.first)
        #expect(try workspace.spanRows(trace: id) == trace.spans.map(\.row))
        #expect(try workspace.spanPayload(trace: id, ordinal: 1_234)?.rawZstd == trace.spans[1_234].rawZstd)
        #expect(try workspace.spanPayloads(trace: id).map(\.rawZstd) == trace.spans.map(\.rawZstd))
        #expect(try workspace.traceMetadata(trace: id) == #"{"task":"arith"}"#)
        #expect(try count("spans", in: workspace) == 2_500)
    }

    /// A workspace from before v24 gets each trace's model usage from its spans when it is
    /// opened, on either backend, equal to what an import now keeps.
    @Test(arguments: StoreBackend.allCases) func anOlderWorkspaceGetsItsModelUsageFromItsSpans(
        _ backend: StoreBackend
    ) throws {
        let workspace = try tables(backend, "backfill")
        var second = Self.trace("run-2")
        second.spans[1].row.model = nil
        _ = try workspace.importTraces([Self.trace(), second])
        let before = try workspace.modelUsage()
        #expect(before.count == 3)
        let reopened: TraceTables
        switch workspace.database {
        case let file as Workspace:
            try file.write { db in
                try db.execute(sql: "DROP TABLE trace_model_usage")
                try db.execute(
                    sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [TraceTables.usageMigration])
            }
            reopened = TraceTables(try Workspace(path: file.path))
        case let store as PostgresStore:
            try store.execute("DROP TABLE trace_model_usage")
            try store.execute("DELETE FROM loupe_migrations WHERE identifier = ?", [.text(TraceTables.usageMigration)])
            reopened = TraceTables(try PostgresStore.open(store.url))
        default:
            Issue.record("an unknown backend")
            return
        }
        let key = { (u: ModelUsage) in "\(u.trace) \(u.model ?? "")" }
        #expect(try reopened.modelUsage().sorted { key($0) < key($1) } == before.sorted { key($0) < key($1) })
    }

    /// A trace stored before the rule that counts a model call recorded again below it once
    /// (10ddffb) kept doubled totals; opening the workspace repairs them, on either backend, to
    /// what the store now computes, and leaves every other trace as it was.
    @Test(arguments: StoreBackend.allCases) func totalsThatCountedANestedModelCallTwiceAreRepaired(
        _ backend: StoreBackend
    ) throws {
        let workspace = try tables(backend, "recount")
        // The agent's last model call (s3) is recorded again by the model's server, below it.
        var nested = Self.trace("nested")
        nested.spans.append(
            Self.span(4, "chat gpt-4o-mini", parent: "s3", model: "gpt-4o-mini", tokens: (120, 5), cost: 0.001))
        // What the store wrote before the rule: every model call and step summed.
        nested.summary.spanCount = 5
        nested.summary.stepCount = 4
        nested.summary.inputTokens = 340
        nested.summary.outputTokens = 20
        nested.summary.cost = 0.002
        // A trace with no nested call whose stored totals differ from its spans' on purpose.
        let plain = Self.trace("plain")
        let ids = try workspace.importTraces([nested, plain]).ids
        let reopen: () throws -> TraceTables
        switch workspace.database {
        case let file as Workspace:
            try file.write { db in
                try db.execute(sql: "DELETE FROM trace_model_usage")
                try db.execute(sql: TraceTables.usageBackfill)
                try db.execute(
                    sql: "DELETE FROM grdb_migrations WHERE identifier = ?", arguments: [TraceTables.recountMigration])
            }
            reopen = { TraceTables(try Workspace(path: file.path)) }
        case let store as PostgresStore:
            try store.execute("DELETE FROM trace_model_usage")
            try store.execute(TraceTables.usageBackfill)
            try store.execute(
                "DELETE FROM loupe_migrations WHERE identifier = ?", [.text(TraceTables.recountMigration)])
            reopen = { TraceTables(try PostgresStore.open(store.url)) }
        default:
            Issue.record("an unknown backend")
            return
        }
        #expect(try workspace.modelUsage().first { $0.trace == ids[0] }?.calls == 3)
        let reopened = try reopen()
        let repaired = try #require(try reopened.traceSummary(id: ids[0]))
        #expect(repaired.stepCount == 3 && repaired.spanCount == 5)
        #expect(repaired.inputTokens == 220 && repaired.outputTokens == 15 && repaired.cost == 0.001)
        let usage = try #require(try reopened.modelUsage().first { $0.trace == ids[0] })
        #expect(usage.calls == 2 && usage.inputTokens == 220 && usage.outputTokens == 15)
        #expect(usage.cost == 0.001 && usage.costed == 1)
        let untouched = try #require(try reopened.traceSummary(id: ids[1]))
        #expect(untouched.stepCount == 3 && untouched.inputTokens == 220 && untouched.cost == nil)
        // Growing the repaired trace later sums as the repair did.
        var resent = nested
        resent.spans = [nested.spans[4]]
        _ = try reopened.appendSpans([resent])
        #expect(try reopened.traceSummary(id: ids[0])?.inputTokens == 220)
    }

    /// Traces go in chunks: many traces in one import keep their order in the ids, and a trace
    /// given twice in one import is stored as two imports in turn would store it.
    @Test(arguments: StoreBackend.allCases) func manyTracesAndATraceGivenTwiceImportAsOneAtATimeWould(
        _ backend: StoreBackend
    ) throws {
        let workspace = try tables(backend, "chunks")
        let many = (0..<600).map { Self.trace("run-\($0)") }
        let counts = try workspace.importTraces(
            many + [Self.trace("run-7", hash: "h2", answer: "43"), Self.trace("run-8")])
        #expect(counts.added == 600 && counts.replaced == 1 && counts.unchanged == 1)
        #expect(counts.ids.count == 602)
        let summaries = try workspace.traceSummaries()
        #expect(summaries.map(\.externalID) == many.map(\.summary.externalID))
        #expect(Array(counts.ids.prefix(600)) == summaries.map(\.id))
        #expect(counts.ids[600] == summaries[7].id && counts.ids[601] == summaries[8].id)
        #expect(try workspace.traceScores(trace: summaries[7].id).map(\.answer) == ["43"])
        #expect(try count("spans", in: workspace) == 600 * 4)
        #expect(try count("trace_model_usage", in: workspace) == 600)
    }

    /// The list reads each trace's import time with its own parser: the same instant GRDB reads.
    @Test func importTimesReadAsGRDBReadsThem() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let date = Date(timeIntervalSince1970: Double.random(in: -2e9...5e9, using: &generator))
            let stored = SQLValue(date)
            let grdb = Date.fromDatabaseValue(date.databaseValue)
            let ours = TraceTables.date(stored)
            #expect(grdb != nil && ours != nil)
            #expect(abs((ours?.timeIntervalSince1970 ?? 0) - (grdb?.timeIntervalSince1970 ?? 1)) < 1e-6, "\(stored)")
        }
        #expect(TraceTables.date(.text("2026-11-25")) == Date.fromDatabaseValue("2026-11-25".databaseValue))
        #expect(TraceTables.date(.text("not a date")) == nil)
    }

    /// A list kept between reads (the Traces panel while spans stream in) reads only the traces
    /// added or changed since its last read: none when nothing changed, a trace that grew, a new
    /// one, and a row another statement changed (a killed agent's trace marked).
    @Test(arguments: StoreBackend.allCases) func changesSinceAReadAreTheTracesWrittenSince(_ backend: StoreBackend)
        throws
    {
        let workspace = try tables(backend, "changes")
        let first = try workspace.importTraces([Self.trace("a"), Self.trace("b")]).ids
        let all = try workspace.traceChanges(since: nil)
        #expect(all.traces == (try workspace.traceSummaries()) && all.total == 2)
        #expect(all.usage == (try workspace.modelUsage()))
        let none = try workspace.traceChanges(since: all.watermark)
        #expect(none.traces.isEmpty && none.usage.isEmpty && none.total == 2)

        var grown = Self.trace("b", hash: "h2", answer: "43")
        grown.spans.append(Self.span(4, "chat gpt-4o", parent: "s0", model: "gpt-4o", tokens: (7, 3)))
        grown.summary.spanCount = 5
        let third = try workspace.importTraces([grown, Self.trace("c")]).ids
        #expect(third[0] == first[1])
        let changed = try workspace.traceChanges(since: none.watermark)
        #expect(changed.traces.map(\.id) == [first[1], third[1]] && changed.total == 3)
        #expect(changed.traces.first?.spanCount == 5)
        #expect(changed.usage == (try workspace.modelUsage()).filter { $0.trace != first[0] })
        #expect(changed.usage.contains { $0.trace == first[1] && $0.model == "gpt-4o" })

        _ = try workspace.database.writeStatements { sql in
            try sql.execute("UPDATE traces SET error_count = error_count + 1 WHERE id = ?", [.integer(first[0])])
        }
        let marked = try workspace.traceChanges(since: changed.watermark)
        #expect(marked.traces.map(\.id) == [first[0]] && marked.traces.first?.errorCount == 2)
        #expect(try workspace.traceChanges(since: marked.watermark).traces.isEmpty)
    }

    /// PostgreSQL's writers commit out of order: a transaction that wrote a trace before a read
    /// but commits after it, while a later one committed before, is read next time, and what the
    /// read saw is not read again.
    @Test func aTraceWrittenByATransactionRunningAtAReadIsReadNextTime() throws {
        let workspace = try tables(.postgres, "order")
        let a = try #require(try workspace.importTraces([Self.trace("a")]).ids.first)
        let start = try workspace.traceChanges(since: nil)
        let (entered, go, done) = (
            DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0)
        )
        let database = workspace.database
        let held = Thread {
            // Numbered now, committed after the read below. A failed update still lets the test
            // go on, and fail on what it reads instead of waiting for good.
            defer { done.signal() }
            _ = try? database.writeStatements { sql in
                do {
                    try sql.execute("UPDATE traces SET error_count = 7 WHERE id = ?", [.integer(a)])
                } catch {
                    entered.signal()
                    throw error
                }
                entered.signal()
                _ = go.wait(timeout: .now() + 30)
            }
        }
        held.start()
        #expect(entered.wait(timeout: .now() + 30) == .success)
        let b = try workspace.importTraces([Self.trace("b")]).ids
        let during = try workspace.traceChanges(since: start.watermark)
        #expect(during.traces.map(\.id) == b)
        go.signal()
        #expect(done.wait(timeout: .now() + 30) == .success)
        let after = try workspace.traceChanges(since: during.watermark)
        #expect(after.traces.map(\.id) == [a] && after.traces.first?.errorCount == 7)
    }
}
