import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// The Traces panel's port on the sample OTLP export and mini-SWE-agent runs, imported into a
/// real workspace.
@Suite struct TracesBrowserTests {
    let browser: TracesBrowser
    let workspace: Workspace

    init() throws {
        workspace = try KitFixtures.workspace("traces")
        _ = try TraceService(workspace: workspace).importFiles([
            KitFixtures.path("sample-data/traces/otlp-genai.jsonl"),
            KitFixtures.path("sample-data/traces/mini-swe-agent-submitted.traj.json"),
            KitFixtures.path("sample-data/traces/mini-swe-agent-limits.traj.json"),
        ])
        browser = TracesBrowser(workspace: workspace)
    }

    @Test func listsEveryImportedTraceInImportOrderWithItsTotals() throws {
        let traces = try browser.list()
        #expect(traces.count == 5)
        #expect(traces.map(\.id) == traces.map(\.id).sorted())
        #expect(traces.map(\.format) == ["otlp", "otlp", "otlp", "swe-agent", "swe-agent"])
        #expect(traces.allSatisfy { $0.spanCount > 0 && $0.stepCount > 0 })
        // The first run's calculator call fails.
        #expect(traces[0].errorCount > 0)
    }

    /// The port keeps the list between reads and reads only what changed, yet every read equals
    /// a whole one: after an import, a renamed trace, a price set (which reprices every kept
    /// trace) and a deleted trace (which the count gives away).
    @Test func theListKeptBetweenReadsEqualsAWholeReadAfterEachChange() throws {
        let service = TraceService(workspace: workspace)
        #expect(try browser.list() == service.list())
        _ = try service.importFiles([
            KitFixtures.path("sample-data/traces/openai-chat.jsonl"),
            KitFixtures.path("sample-data/traces/inspect-arith.json"),
        ])
        #expect(try browser.list() == service.list())
        #expect(try browser.list().count > 5)

        let first = try #require(try service.list().first)
        _ = try workspace.writeStatements { sql in
            try sql.execute("UPDATE traces SET name = 'renamed' WHERE id = ?", [.integer(first.id)])
        }
        #expect(try browser.list() == service.list())
        #expect(try browser.list().first?.name == "renamed")

        let unpriced = try #require(
            try service.tables.modelUsage().first { $0.model != nil && $0.costed < $0.calls && $0.inputTokens != nil })
        let before = try browser.list()
        try service.tables.setModelPrices([
            ModelPrice(
                model: unpriced.model!, inputPerMTok: 1_000, outputPerMTok: 2_000, cachedInputPerMTok: nil,
                source: "test")
        ])
        let repriced = try browser.list()
        #expect(repriced == (try service.list()))
        #expect(repriced.first { $0.id == unpriced.trace }?.cost != before.first { $0.id == unpriced.trace }?.cost)

        _ = try workspace.writeStatements { sql in
            try sql.execute("DELETE FROM traces WHERE id = ?", [.integer(first.id)])
        }
        #expect(try browser.list() == service.list())
        #expect(try !browser.list().contains { $0.id == first.id })

        // The newest trace deleted and another imported before the next read: as many traces as
        // before, so only numbers never handed out twice make the new one read.
        let count = try service.list().count
        let newest = try #require(try service.list().last)
        _ = try workspace.writeStatements { sql in
            try sql.execute("DELETE FROM traces WHERE id = ?", [.integer(newest.id)])
        }
        _ = try service.importFiles([KitFixtures.path("sample-data/traces/swe-agent-v0.traj")])
        #expect(try service.list().count == count)
        #expect(try browser.list() == service.list())

        // The reload key reads everything again.
        #expect(try browser.list(fresh: true) == service.list())
    }

    @Test func anOpenedTraceHasItsSpansStepsAndDepths() throws {
        let first = try #require(try browser.list().first)
        let opened = try browser.open(first.id)
        #expect(opened.summary.id == first.id)
        #expect(opened.spans.count == first.spanCount && opened.steps.count == first.stepCount)
        #expect(!opened.steps.isEmpty && opened.steps.allSatisfy { opened.spans.indices.contains($0) })
        #expect(opened.depths.count == opened.spans.count && opened.depths.first == 0)
        #expect(opened.depths.contains { $0 > 0 })
    }

    @Test func aSpanComesWithItsContentAndItsSource() throws {
        let first = try #require(try browser.list().first)
        let opened = try browser.open(first.id)
        let call = try #require(opened.spans.first { $0.kind == "llm" })
        let detail = try browser.span(trace: first.id, ordinal: call.ordinal)
        #expect(!detail.payload.output.isEmpty)
        #expect(detail.raw?["name"]?.string == call.name)
        #expect(throws: (any Error).self) { try browser.span(trace: first.id, ordinal: opened.spans.count + 5) }
    }

    @Test func searchFindsAWordThatIsInASpanAndNothingForOneThatIsNot() throws {
        let first = try #require(try browser.list().first)
        let opened = try browser.open(first.id)
        let failing = try #require(opened.spans.first { $0.status == "error" })
        let found = try browser.search(trace: first.id, text: "division by ZERO")
        #expect(found.contains(failing.ordinal))
        #expect(try browser.search(trace: first.id, text: "xylophone").isEmpty)
    }

    @Test func aTraceDiffedWithItselfNeverDiverges() throws {
        let first = try #require(try browser.list().first)
        let diff = try browser.diff(first.id, first.id)
        #expect(diff.firstDivergence == nil)
        #expect(diff.rows.count == first.stepCount)
        #expect(diff.counts == [.same: first.stepCount])
        #expect(diff.rows.allSatisfy { $0.tokenDelta ?? 0 == 0 && $0.latencyDeltaNs ?? 0 == 0 })
    }

    @Test func twoDifferentRunsPartWaysAtTheFirstStepThatDiffers() throws {
        let runs = try browser.list().filter { $0.format == "swe-agent" }
        try #require(runs.count == 2)
        let diff = try browser.diff(runs[0].id, runs[1].id)
        let divergence = try #require(diff.firstDivergence)
        #expect(diff.rows[divergence].change != .same)
        #expect(diff.rows[..<divergence].allSatisfy { $0.change == .same })
        #expect(diff.left.id == runs[0].id && diff.right.id == runs[1].id)
    }

    @Test func openingAMissingTraceSaysHowToListThem() throws {
        let error = #expect(throws: (any Error).self) { try browser.open(999) }
        #expect("\(error.map { "\($0)" } ?? "")".contains("no such trace"))
        #expect(throws: (any Error).self) { try browser.diff(1, 999) }
    }
}
