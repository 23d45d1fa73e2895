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
