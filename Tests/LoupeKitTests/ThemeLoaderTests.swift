import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI
import Testing

@Suite struct ThemeLoaderTests {
    static let repositoryThemes = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("themes").path

    /// `[#` and the like made TOMLKit's parser assert and abort the whole program (scripts/fuzz
    /// found it; the input it found is kept as a fuzz seed). Now a clear error at the line.
    @Test(arguments: [
        "[#\n", "name = \"x\"\n\n[ ]\n", "[[=]]\n", "  [ #rf\"\n", "[.]\n", "[\u{0317}6]\n", "\r\n[\u{10B306}",
    ])
    func aTableHeaderWithoutANameIsAnErrorNotAnAbort(text: String) {
        let error = #expect(throws: ThemeError.self) { try ThemeLoader.parse(text, file: "bad.toml", name: "bad") }
        #expect(error?.description.contains("a table header needs a name") == true)
        #expect(
            error?.description.hasPrefix(
                "bad.toml:\(text.hasPrefix("name") ? 3 : text.unicodeScalars.first == "\r" ? 2 : 1)")
                == true)
    }

    @Test(arguments: ["[colors]\n", "[ \"colors\" ]\n", "[[a-b]]\n", "['x']\n"])
    func namedTableHeadersAreNotRefused(text: String) {
        #expect(ThemeLoader.headerWithoutName(in: text) == nil)
    }

    @Test func shippedDefaultThemeEqualsTheBuiltInOne() throws {
        let loader = ThemeLoader(searchDirectories: [Self.repositoryThemes])
        #expect(try loader.load("default") == Theme.builtInDefault)
    }

    @Test(arguments: ["default", "light", "high-contrast", "mono"])
    func everyShippedThemeLoadsCompletely(name: String) throws {
        let theme = try ThemeLoader(searchDirectories: [Self.repositoryThemes]).load(name)
        #expect(theme.name == name)
        #expect(ThemeRole.allCases.allSatisfy { theme.colors[$0] != nil })
        #expect(theme.heatmapRamp.count >= 2)
        #expect(theme.isMonochrome == (name == "mono"))
    }

    @Test func extendsOverridesOnlyTheGivenRoles() throws {
        let theme = try ThemeLoader.parse(
            "extends = \"default\"\n[colors]\n\"text\" = \"#010203\"\n", file: "t.toml", name: "t")
        #expect(theme.colors[.text] == .rgb(RGB(1, 2, 3)))
        #expect(theme.colors[.border] == Theme.builtInDefault.colors[.border])
        #expect(theme.name == "t")
    }

    @Test func nestedTablesAreTheSameAsDottedKeys() throws {
        let theme = try ThemeLoader.parse("[colors.status]\nok = \"#00ff00\"\n", file: "t.toml", name: "t")
        #expect(theme.colors[.statusOK] == .rgb(RGB(0, 255, 0)))
    }

    @Test(arguments: [
        ("[colors\n\"text\" = \"#ffffff\"\n", 1, "not valid TOML"),
        ("name = \"x\"\n[colors]\n\"txet\" = \"#ffffff\"\n", 3, "unknown role 'txet' (did you mean 'text'?)"),
        ("[colors]\n\"text\" = \"#ffffff\"\n\"border\" = \"blue\"\n", 3, "'border' must be \"#rrggbb\" or \"default\""),
        ("[colors]\n\"heatmap.ramp\" = [\"#000000\"]\n", 2, "needs at least two colours"),
        ("monochrome = \"yes\"\n", 1, "'monochrome' must be true or false"),
        ("colours = {}\n", 1, "unknown key 'colours'"),
    ])
    func brokenFilesNameTheFileAndLine(text: String, line: Int, message: String) {
        let error = #expect(throws: ThemeError.self) {
            try ThemeLoader.parse(text, file: "themes/broken.toml", name: "broken")
        }
        #expect(error?.location == LoupeBase.SourceLocation(file: "themes/broken.toml", line: line))
        #expect(error?.message.contains(message) == true, "\(error?.message ?? "")")
        #expect(error?.description.hasPrefix("themes/broken.toml:\(line): ") == true)
    }

    @Test func extendsCyclesAndUnknownThemesAreErrors() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-themes-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try "extends = \"b\"\n".write(toFile: directory + "/a.toml", atomically: true, encoding: .utf8)
        try "extends = \"a\"\n".write(toFile: directory + "/b.toml", atomically: true, encoding: .utf8)
        let loader = ThemeLoader(searchDirectories: [directory])
        let cycle = #expect(throws: ThemeError.self) { try loader.load("a") }
        #expect(cycle?.message.contains("extends itself") == true)
        let missing = #expect(throws: ThemeError.self) { try loader.load("nope") }
        #expect(missing?.message.contains("no theme named 'nope'") == true)
        #expect(loader.availableThemes() == ["default", "a", "b"])
        #expect(try loader.load("default") == .builtInDefault)
    }
}
