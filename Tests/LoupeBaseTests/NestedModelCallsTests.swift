import LoupeBase
import Testing

/// The rule that counts a model call once when it is recorded at two levels of a trace.
struct NestedModelCallsTests {
    /// Spans as (id, parent, is a model call, carries usage).
    static func outer(_ spans: [(String, String?, Bool, Bool)]) -> [Bool] {
        NestedModelCalls.outer(
            ids: spans.map(\.0), parents: spans.map(\.1), isModelCall: spans.map(\.2), carriesUsage: spans.map(\.3))
    }

    @Test func theInnermostCallWithUsageWinsThroughSpansBetween() {
        // agent → generation (usage) → http (not a call) → server chat (usage); a hosted call
        // beside it keeps counting, as does the tool.
        let outer = Self.outer([
            ("agent", nil, false, false), ("generation", "agent", true, true), ("http", "generation", false, false),
            ("server", "http", true, true), ("hosted", "agent", true, true), ("tool", "agent", false, false),
        ])
        #expect(outer == [false, true, false, false, false, false])
    }

    @Test func anOuterCallWithoutUsageIsOneStepWithItsInnerCall() {
        #expect(Self.outer([("g", nil, true, false), ("s", "g", true, true)]) == [true, false])
    }

    @Test func aCallBelowWithoutUsageLeavesTheOuterCounted() {
        #expect(Self.outer([("g", nil, true, true), ("s", "g", true, false)]) == [false, false])
    }

    @Test func everyCallAboveTheInnermostIsOuterOnce() {
        // Three levels, spans out of tree order, and two inner calls under one outer call.
        let outer = Self.outer([
            ("c", "b", true, true), ("a", nil, true, true), ("b", "a", true, true), ("d", "b", true, true),
        ])
        #expect(outer == [false, true, true, false])
    }

    @Test func aCycleOfParentsEndsAndASpanIsNotItsOwnDescendant() {
        #expect(Self.outer([("a", "a", true, true)]) == [false])
        #expect(Self.outer([("a", "b", true, true), ("b", "a", true, false)]) == [false, true])
        #expect(Self.outer([("a", "missing", true, true)]) == [false])
    }
}
