import Foundation
import LoupeKit
import LoupeStore

/// The repository's sample data and fresh workspaces for the ports' tests.
enum KitFixtures {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// A path in the repository, e.g. `sample-data/traces/otlp-genai.jsonl`.
    static func path(_ relative: String) -> String { repositoryRoot.appendingPathComponent(relative).path }

    /// A new empty directory under the system's temporary directory.
    static func temporaryDirectory(_ label: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-\(label)-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A fresh workspace file in its own temporary directory.
    static func workspace(_ label: String = "kit") throws -> Workspace {
        try Workspace(path: temporaryDirectory(label) + "/w.sqlite")
    }

    /// The model library the user has (`$LOUPE_MODELS` or `~/.cache/loupe/models`).
    static let models = ModelLibrary.standard(environment: ProcessInfo.processInfo.environment)
}
