import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI
import Testing

@Suite struct ThemeLoaderTests {
    static let repositoryThemes = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("themes").path

    /// `[#` and the like made TOMLKit's parser assert and abort the whole program (scripts/fuzz
    /// found it; the inputs it found are kept as fuzz seeds). Now a clear error at the line.
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

    @Test func theTOMLReaderReadsWhatThemesUse() throws {
        let text = """
            \u{FEFF}# a comment
            name = 'lit\\eral'   # trailing comment\r
            "quoted key" = "tab\\t \\u00e9 \\U0001F600 \\"q\\""
            flag = true
            [ colors . status ]
            ok = "#00ff00"
            list = [
              "a", # one
              'b',
            ]
            inline = { x = false, y.z = "w" }
            """
        let table = try ThemeTOML.parse(text)
        #expect(table.keys == ["name", "quoted key", "flag", "colors"])
        #expect(table["name"] == .string("lit\\eral"))
        #expect(table["quoted key"] == .string("tab\t é 😀 \"q\""))
        #expect(table["flag"] == .bool(true))
        #expect(table.line(of: "flag") == 4)
        let status = try #require(table["colors"]?.table?["status"]?.table)
        #expect(status["ok"] == .string("#00ff00"))
        #expect(status.line(of: "list") == 7)
        #expect(status["list"] == .array([.string("a"), .string("b")]))
        let inline = try #require(status["inline"]?.table)
        #expect(inline["x"] == .bool(false))
        #expect(inline["y"]?.table?["z"] == .string("w"))
    }

    @Test(arguments: [
        ("a = 1\n", 1, "numbers and dates are not used in theme files"),
        ("a = \"\"\"x\"\"\"\n", 1, "multi-line strings"),
        ("\n[[colors]]\n", 2, "arrays of tables"),
        ("a = \"x\"\na = \"y\"\n", 2, "the key 'a' is defined twice (first on line 1)"),
        ("[t]\n[t]\n", 2, "the table [t] is defined twice"),
        ("a = \"x\"\n[a.b]\n", 2, "'a' already holds a value (line 1), not a table"),
        ("a = \"x\" b = \"y\"\n", 1, "expected the end of the line, found 'b'"),
        ("a = \"x\n", 1, "the string is not closed on its line"),
        ("a = \"\\q\"\n", 1, "unknown escape '\\q'"),
        ("a = \"\\uD800\"\n", 1, "is not a Unicode scalar value"),
        ("a = \"\u{1B}[2J\"\n", 1, "a control character (U+001B) inside a string"),
        ("a = [\"x\"\n\n", 3, "the array is not closed"),
        ("a = { b = \"c\"\n", 1, "expected ',' or '}' in the inline table"),
        ("a = \"x\"\rb = \"y\"\n", 1, "a carriage return without a line feed"),
        ("a\n", 1, "expected '=' after the key 'a', found the end of the line"),
        ("= \"x\"\n", 1, "expected a key"),
        ("a = yes\n", 1, "expected a value"),
    ])
    func theTOMLReaderSaysWhatIsWrongAndWhere(text: String, line: Int, message: String) {
        let error = #expect(throws: ThemeTOML.SyntaxError.self) { try ThemeTOML.parse(text) }
        #expect(error?.line == line, "\(text.debugDescription): \(error?.message ?? "")")
        #expect(error?.message.contains(message) == true, "\(text.debugDescription): \(error?.message ?? "")")
    }

    /// Nesting is bounded, so a file of brackets is an error, not a stack overflow.
    @Test func deepNestingIsAnErrorNotAStackOverflow() {
        for opening in ["[", "{ a = "] {
            let error = #expect(throws: ThemeTOML.SyntaxError.self) {
                try ThemeTOML.parse("a = " + String(repeating: opening, count: 100_000))
            }
            #expect(error?.message.contains("nest deeper than 32 levels") == true)
        }
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
