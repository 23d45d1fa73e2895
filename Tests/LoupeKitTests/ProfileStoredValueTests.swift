import Foundation
import LoupeBase
import LoupeKit
import LoupeProfiling
import LoupeStore
import Testing

/// A profile's stored JSON columns read back once, with a located error: a row damaged by hand
/// (a raw `UPDATE` on a real workspace, HTA's CPU trace of an MLP step imported) names its
/// profile, event and column instead of reading as a profile without thread names or a multiply
/// without shapes.
@Suite struct ProfileStoredValueTests {
    let workspace: Workspace
    let id: Int64

    init() throws {
        workspace = try KitFixtures.workspace("profile-values")
        id = try ProfileService(workspace: workspace).importFiles([
            KitFixtures.path("\(ProfilesBrowserTests.kineto)/cpu-mlp-step.json.gz")
        ]).id
    }

    private func update(_ sql: String, _ arguments: [SQLValue]) throws {
        _ = try workspace.writeStatements { statements in try statements.execute(sql, arguments) }
    }

    @Test func aProfileWhoseFilesDoNotParseOpensAndSaysSo() throws {
        let browser = ProfilesBrowser(workspace: workspace)
        let intact = try browser.open(id)
        #expect(intact.unreadable.isEmpty)
        try update("UPDATE profiler_traces SET files_json = '[{\"rank\": ' WHERE id = ?", [.integer(id)])

        let opened = try browser.open(id)
        #expect(opened.unreadable.map(\.headline) == ["unreadable files (profile \(id), column files_json)"])
        #expect(opened.unreadable.first?.reason.hasPrefix("line 1, column ") == true)
        // The lanes are still there; only a thread's given name is missing.
        #expect(opened.lanes.count == intact.lanes.count)
    }

    @Test func aMultiplyWhoseArgsDoNotParseIsAnErrorNamingTheEvent() throws {
        let service = ProfileService(workspace: workspace)
        let record = try #require(try workspace.profiles.profilerTrace(id: id))
        #expect(try service.gemms(record).unshaped == 0)
        let names = ProfileNames(try workspace.profiles.profilerNames(traceID: id))
        let addmm = try #require(
            try workspace.profiles.profilerEvents(traceID: id, withArgs: true).first {
                names[$0.name] == "aten::addmm" && $0.args != nil
            })
        let browser = ProfilesBrowser(workspace: workspace)
        #expect(try browser.launchSummary(id, rank: addmm.rank, index: addmm.index) != nil)
        try update(
            "UPDATE profiler_events SET args = '{\"Input Dims\": [' WHERE trace_id = ? AND rank = ? AND event_index = ?",
            [.integer(id), .integer(Int64(addmm.rank)), .integer(Int64(addmm.index))])

        let place = "profile \(id), rank \(addmm.rank), event \(addmm.index)"
        let gemms = #expect(throws: StoredValueError.self) { try service.gemms(record) }
        #expect(gemms?.headline == "unreadable args (\(place), column args)")
        let launch = #expect(throws: StoredValueError.self) {
            try browser.launchSummary(id, rank: addmm.rank, index: addmm.index)
        }
        #expect(launch?.headline == "unreadable args (\(place), column args)")
    }
}
