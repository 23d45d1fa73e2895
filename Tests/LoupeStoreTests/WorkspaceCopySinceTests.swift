import Foundation
import LoupePostgres
import LoupeStore
import Testing

/// `workspace copy --since`: every table says how its rows are chosen, and the dates it takes.
@Suite struct WorkspaceCopySinceTests {
    /// A table added later must say how `--since` chooses its rows (or that it comes whole):
    /// a copy would otherwise stop at it.
    @Test func everyCopiedTableHasARule() throws {
        let copied = Set(try StoreTable.current().map(\.name)).subtracting(WorkspaceCopy.machineLocal)
        #expect(Set(WorkspaceCopy.Since.conditions.keys) == copied)
    }

    @Test func datesAndTimesBackAreRead() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = utc
        let day = try #require(calendar.date(from: DateComponents(year: 2026, month: 11, day: 20)))
        #expect(WorkspaceCopy.Since.parse("2026-11-20") == day)
        #expect(WorkspaceCopy.Since.parse("2026-11-20 14:30") == day.addingTimeInterval(14.5 * 3600))
        #expect(WorkspaceCopy.Since.parse("2026-11-20T14:30:15Z") == day.addingTimeInterval(14.5 * 3600 + 15))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(WorkspaceCopy.Since.parse("36h", now: now) == now.addingTimeInterval(-36 * 3600))
        #expect(WorkspaceCopy.Since.parse("7d", now: now) == now.addingTimeInterval(-7 * 86400))
        for wrong in ["", "yesterday", "2026-13-45", "-3d", "7w"] {
            #expect(WorkspaceCopy.Since.parse(wrong, now: now) == nil, "\(wrong)")
        }
    }
}
