import Foundation
import Testing

@Suite struct DocsTests {
    @Test func keybindingsDocumentIsGeneratedFromTheKeymaps() throws {
        let committed = try String(
            contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/keybindings.md"), encoding: .utf8)
        let generated = try TestEnvironment.run(["docs", "keybindings"])
        #expect(generated.status == 0)
        #expect(
            committed == generated.output,
            "docs/keybindings.md is stale: run `loupe docs keybindings > docs/keybindings.md`")
    }
}
