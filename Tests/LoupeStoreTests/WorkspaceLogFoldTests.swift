import Foundation
import GRDB
import LoupeStore
import Testing

/// Folding the write-ahead log into the workspace file (``Workspace/foldLog(past:)``) while a
/// second SQLite connection reads the log: SQLite answers a blocked checkpoint with a row, not an
/// error, so the fold reads that row and says so.
@Suite struct WorkspaceLogFoldTests {
    let path: String

    init() throws {
        let directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("loupe-fold-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/w.sqlite"
    }

    static func fileSize(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    @Test func aWholeFoldAReaderBlocksSaysSoAndLosesNothing() throws {
        let workspace = try Workspace(path: path, busyTimeout: 0.2)
        try workspace.settings.setSetting("theme", to: "mono")
        let reader = try DatabaseQueue(path: path)
        try reader.inDatabase { db in
            // A read transaction holds its snapshot of the log until it ends.
            try db.beginTransaction(.deferred)
            #expect(try String.fetchOne(db, sql: "SELECT value FROM settings WHERE key = 'theme'") == "mono")
            try workspace.settings.setSetting("theme", to: "light")
            let error = #expect(throws: WorkspaceError.self) { try workspace.foldLog(past: nil) }
            #expect(error?.code == .busy)
            #expect(error?.description.hasPrefix(path + ": the write-ahead log was not folded") == true)
            #expect(error?.description.contains("TRUNCATE checkpoint was blocked") == true)
            #expect(Self.fileSize(path + "-wal") > 0)
            // A passive fold copies what no reader needs and reports nothing: it is best effort.
            try workspace.foldLog(past: 0)
            try db.commit()
        }
        try reader.close()
        try workspace.foldLog(past: nil)
        #expect(Self.fileSize(path + "-wal") == 0)
        // The file alone holds the write made while the reader held the log.
        let copy = (path as NSString).deletingLastPathComponent + "/copy.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try Workspace(path: copy, access: .read).settings.setting("theme") == "light")
    }
}
