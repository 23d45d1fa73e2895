import Foundation
import LoupeKit
import LoupeStore
import Testing

/// Trace diffs of the real Inspect AI log in sample-data: three questions over two epochs,
/// scored by `match()`, where epoch 2 answers q3 wrongly (C in epoch 1, I in epoch 2).
@Suite struct TraceDiffTests {
    let service: TraceService
    let traces: [TraceSummary]

    init() throws {
        service = TraceService(workspace: try KitFixtures.workspace("trace-diff"))
        _ = try service.importFiles([KitFixtures.path("sample-data/traces/inspect-arith.json")])
        traces = try service.list()
    }

    /// The trace of a sample's epoch (Inspect's external id is `run/sample/epoch`).
    private func trace(_ sample: String, epoch: Int) throws -> Int64 {
        try #require(traces.first { $0.externalID.hasSuffix("/\(sample)/\(epoch)") }).id
    }

    /// The diff's row of the `match` scorer's span.
    private func scoreRow(_ diff: TraceDiff) throws -> TraceDiff.Row {
        try #require(diff.rows.first { $0.left?.kind == "eval" && $0.left?.name == "score match" })
    }

    @Test func aScoreThatChangedIsMarkedChangedWithEachSidesValue() throws {
        let diff = try service.diff(try trace("q3", epoch: 1), try trace("q3", epoch: 2))
        let row = try scoreRow(diff)
        #expect(row.right?.name == "score match")
        #expect(row.change == .changed)
        #expect(row.leftText.hasPrefix("C") && row.rightText.hasPrefix("I"))
        // The table reads the change without opening the row: both verdicts, in order.
        #expect(row.leftVerdict == "C" && row.rightVerdict == "I")
        #expect(row.verdictChange == "C → I")
        // A step that is not an evaluation has no verdict.
        #expect(
            diff.rows.filter { $0.left?.kind != "eval" && $0.right?.kind != "eval" }.allSatisfy {
                $0.verdictChange == nil
            })
        // The header's count is the rows' own: the score row is among the changed ones.
        let changed = diff.rows.filter { $0.change == .changed }.count
        #expect(diff.counts[.changed] == changed)
        #expect(diff.rows.contains { $0.change == .changed && $0.left?.kind == "eval" })
    }

    @Test func anUnchangedScoreIsSameAndStillShowsItsValue() throws {
        let diff = try service.diff(try trace("q1", epoch: 1), try trace("q1", epoch: 2))
        let row = try scoreRow(diff)
        #expect(row.change == .same)
        #expect(row.leftText.hasPrefix("C") && row.rightText.hasPrefix("C"))
        #expect(row.verdictChange == "C")
    }
}
