import Foundation
import LoupeCommands
import Testing

/// Every notebook in `notebooks/` runs in the tests, and its committed output must be what a
/// fresh run writes: a notebook is documentation that cannot go stale.
@Suite struct NotebookReproducibilityTests {
    static let notebooks: [String] = {
        let directory = TestEnvironment.repositoryRoot.appendingPathComponent("notebooks").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasSuffix(".md") }.sorted().map { directory + "/" + $0 }
    }()

    @Test func thereAreNotebooks() {
        #expect(Self.notebooks.contains { $0.hasSuffix("getting-started.md") })
    }

    @Test(arguments: notebooks)
    func notebookIsUpToDateAndRunsClean(path: String) throws {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let result = try TestEnvironment.run(
            ["notebook", "run", "--check", "notebooks/" + name], directory: TestEnvironment.repositoryRoot.path)
        #expect(result.status == 0, "\(result.output)\(result.error)")
        #expect(result.output.contains("up to date"))
    }
}
