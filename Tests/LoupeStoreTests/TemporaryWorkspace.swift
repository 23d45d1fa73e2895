import Foundation
import LoupeStore

/// A fresh workspace file in its own temporary directory, for tests that need real SQLite.
enum TemporaryWorkspace {
    static func make(_ label: String = "w") throws -> Workspace {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("loupe-store-\(label)-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try Workspace(path: directory + "/w.sqlite")
    }
}
