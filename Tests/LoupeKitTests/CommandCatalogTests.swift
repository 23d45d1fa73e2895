import LoupeKit
import Testing

@Suite struct CommandCatalogTests {
    let catalog = CommandCatalog(entries: [
        .init(path: ["workspace"], abstract: "", options: [], needsArguments: false, isGroup: true),
        .init(
            path: ["workspace", "info"], abstract: "", options: ["--json", "--workspace"], needsArguments: false,
            isGroup: false),
        .init(
            path: ["workspace", "init"], abstract: "", options: ["--workspace"], needsArguments: false, isGroup: false),
        .init(path: ["theme"], abstract: "", options: ["--workspace"], needsArguments: false, isGroup: false),
    ])

    @Test func completesCommandNamesLevelByLevel() {
        #expect(catalog.completions(for: "").candidates == ["theme", "workspace"])
        #expect(catalog.completions(for: "wor").candidates == ["workspace"])
        #expect(catalog.completions(for: "workspace i").candidates == ["info", "init"])
        #expect(catalog.completions(for: "workspace i").partial == "i")
        #expect(catalog.completions(for: "workspace info ").candidates == [])
    }

    @Test func completesOptionsOfTheResolvedCommand() {
        #expect(catalog.completions(for: "workspace info --j").candidates == ["--json"])
        #expect(catalog.completions(for: "workspace info -").candidates == ["--help", "--json", "--workspace"])
    }

    @Test func commonPrefixAndSuggestions() {
        #expect(CommandCatalog.commonPrefix(["info", "init"]) == "in")
        #expect(catalog.suggestion(for: "wrkspace") == "workspace")
        #expect(catalog.suggestion(for: "inof", under: ["workspace"]) == "info")
        #expect(catalog.suggestion(for: "zzzzzzzz") == nil)
        #expect(editDistance("kitten", "sitting") == 3)
    }
}
