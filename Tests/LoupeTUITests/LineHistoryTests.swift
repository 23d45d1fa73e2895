import LoupeTUI
import Testing

@Suite struct LineHistoryTests {
    @Test func upAndDownWalkEntriesStartingWithTheTypedPrefix() {
        var history = LineHistory(entries: ["theme light", "workspace info", "theme mono", "workspace check"])
        #expect(history.previous(current: "theme") == "theme mono")
        #expect(history.previous(current: "theme mono") == "theme light")
        #expect(history.previous(current: "theme light") == nil)
        #expect(history.next() == "theme mono")
        #expect(history.next() == "theme")
        #expect(history.next() == nil)
    }

    @Test func recordSkipsBlanksAndImmediateRepeats() {
        var history = LineHistory()
        history.record("a")
        history.record("a")
        history.record("   ")
        history.record("b")
        #expect(history.entries == ["a", "b"])
    }

    @Test func limitDropsTheOldest() {
        var history = LineHistory(limit: 2)
        for line in ["1", "2", "3"] { history.record(line) }
        #expect(history.entries == ["2", "3"])
    }
}
