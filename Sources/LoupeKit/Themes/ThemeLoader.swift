import Foundation
import LoupeBase
import LoupeTUI

/// Finds and parses `themes/*.toml`.
///
/// A theme file names colours for semantic roles (see ``ThemeRole``):
///
/// ```toml
/// name = "light"
/// extends = "default"          # optional: roles not given here come from that theme
/// monochrome = false           # optional: attributes only, no colours
/// [colors]
/// "text" = "#24292f"
/// "selection.bg" = "#ddf4ff"
/// "heatmap.ramp" = ["#f7fbff", "#08306b"]
/// ```
///
/// Errors carry the file and line. A theme that cannot be loaded never leaves the user without
/// colours: callers fall back to ``LoupeTUI/Theme/builtInDefault`` and show the error.
package struct ThemeLoader: Sendable {
    /// The workspace setting that remembers the theme `:theme NAME` chose.
    package static let settingKey = "theme"

    /// Directories searched in order; the first `NAME.toml` found wins.
    package var searchDirectories: [String]

    package init(searchDirectories: [String]) {
        self.searchDirectories = searchDirectories
    }

    /// The usual places: `$LOUPE_THEMES`, `~/.config/loupe/themes`, `./themes`, and the
    /// `themes/` folder of the checkout the executable was built in (found by walking up).
    package static func standard(environment: [String: String], executablePath: String?) -> ThemeLoader {
        var directories: [String] = []
        if let custom = environment["LOUPE_THEMES"], !custom.isEmpty { directories.append(custom) }
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"].map { $0 + "/.config" } ?? "")
        if !configHome.isEmpty { directories.append(configHome + "/loupe/themes") }
        directories.append(FileManager.default.currentDirectoryPath + "/themes")
        if let checkout = CheckoutDirectory.find("themes", containing: "default.toml", executablePath: executablePath) {
            directories.append(checkout)
        }
        var seen = Set<String>()
        return ThemeLoader(searchDirectories: directories.filter { seen.insert($0).inserted })
    }

    /// Names of the themes found, sorted, `default` first.
    package func availableThemes() -> [String] {
        var names = Set<String>()
        for directory in searchDirectories {
            // A theme directory that is not there (no ~/.config/loupe/themes) holds no theme.
            let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for file in files where file.hasSuffix(".toml") { names.insert(String(file.dropLast(5))) }
        }
        names.insert("default")
        return names.sorted { lhs, rhs in lhs == "default" || (rhs != "default" && lhs < rhs) }
    }

    /// The file that defines `name`, if any.
    package func file(for name: String) -> String? {
        for directory in searchDirectories {
            let path = directory + "/" + name + ".toml"
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return nil
    }

    /// Loads theme `name`, resolving `extends` chains.
    ///
    /// `default` without a file is the built-in default theme.
    package func load(_ name: String) throws(ThemeError) -> Theme {
        try load(name, chain: [])
    }

    private func load(_ name: String, chain: [String]) throws(ThemeError) -> Theme {
        guard !name.isEmpty, !name.contains("/") else {
            throw ThemeError(file: name, line: nil, message: "a theme name is a file name without .toml, like 'light'")
        }
        guard let path = file(for: name) else {
            if name == "default" { return .builtInDefault }
            let known = availableThemes().joined(separator: ", ")
            throw ThemeError(file: name + ".toml", line: nil, message: "no theme named '\(name)' (known: \(known))")
        }
        let text: String
        do {
            text = try TextFile.read(path, limitBytes: 1 << 20)
        } catch {
            throw ThemeError(file: path, line: nil, message: error.reasonDescription)
        }
        return try ThemeLoader.parse(text, file: path, name: name) { parent throws(ThemeError) in
            if chain.contains(parent) || parent == name {
                throw ThemeError(
                    file: path, line: nil,
                    message: "extends itself through \((chain + [name, parent]).joined(separator: " → "))")
            }
            return try load(parent, chain: chain + [name])
        }
    }

    /// Parses one theme file's text.
    ///
    /// - Parameters:
    ///   - file: the path shown in errors.
    ///   - name: the theme's name when the file does not say one.
    ///   - parent: loads the theme named by `extends`.
    package static func parse(
        _ text: String, file: String, name: String,
        parent: (String) throws(ThemeError) -> Theme = { _ throws(ThemeError) in .builtInDefault }
    ) throws(ThemeError) -> Theme {
        let table: ThemeTOML.Table
        do {
            table = try ThemeTOML.parse(text)
        } catch {
            throw ThemeError(file: file, line: error.line, message: "not valid TOML: \(error.message)")
        }
        func fail(_ key: String, line: Int?, _ message: String) -> ThemeError {
            ThemeError(file: file, line: line, message: message)
        }
        func fail(_ key: String, _ message: String) -> ThemeError {
            fail(key, line: table.line(of: key), message)
        }
        let knownTop: Set<String> = ["name", "description", "extends", "monochrome", "colors"]
        for key in table.keys where !knownTop.contains(key) {
            throw fail(key, "unknown key '\(key)' (a theme has name, description, extends, monochrome and [colors])")
        }
        var theme: Theme
        if let extends = table["extends"] {
            guard let parentName = extends.string else {
                throw fail("extends", "'extends' must be a theme name in quotes")
            }
            theme = try parent(parentName)
        } else {
            theme = .builtInDefault
        }
        if let given = table["name"] {
            guard let text = given.string else { throw fail("name", "'name' must be a name in quotes") }
            theme.name = text
        } else {
            theme.name = name
        }
        if let description = table["description"], description.string == nil {
            throw fail("description", "'description' must be text in quotes")
        }
        if let monochrome = table["monochrome"] {
            guard let flag = monochrome.bool else { throw fail("monochrome", "'monochrome' must be true or false") }
            theme.isMonochrome = flag
        }
        guard let colorsValue = table["colors"] else { return theme }
        guard let colors = colorsValue.table else { throw fail("colors", "'colors' must be a table: [colors]") }
        for (key, value, line) in flatten(colors, line: table.line(of: "colors")) {
            if key == "heatmap.ramp" {
                guard let array = value.array else {
                    throw fail(key, line: line, "'heatmap.ramp' must be an array of \"#rrggbb\" colours")
                }
                var ramp: [RGB] = []
                for element in array {
                    guard let hex = element.string, let rgb = RGB(hex: hex) else {
                        let shown = element.string.map { "'\(UntrustedText.sanitized($0))'" } ?? "a non-string"
                        throw fail(key, line: line, "'heatmap.ramp' holds \(shown); expected \"#rrggbb\"")
                    }
                    ramp.append(rgb)
                }
                guard ramp.count >= 2 else { throw fail(key, line: line, "'heatmap.ramp' needs at least two colours") }
                theme.heatmapRamp = ramp
                continue
            }
            guard let role = ThemeRole(rawValue: key) else {
                let suggestion =
                    ThemeRole.allCases.map(\.rawValue).min { editDistance($0, key) < editDistance($1, key) } ?? ""
                throw fail(
                    key, line: line, "unknown role '\(UntrustedText.sanitized(key))' (did you mean '\(suggestion)'?)")
            }
            guard let text = value.string, let color = ThemeColor(parsing: text) else {
                throw fail(key, line: line, "'\(key)' must be \"#rrggbb\" or \"default\"")
            }
            theme.colors[role] = color
        }
        return theme
    }

    /// Nested tables (`[colors.status]`, dotted keys or inline tables) flattened to dotted keys,
    /// each with the line it was given on.
    private static func flatten(
        _ table: ThemeTOML.Table, prefix: String = "", line: Int?
    ) -> [(key: String, value: ThemeTOML.Value, line: Int?)] {
        var result: [(key: String, value: ThemeTOML.Value, line: Int?)] = []
        for key in table.keys {
            guard let value = table[key] else { continue }
            let path = prefix.isEmpty ? key : prefix + "." + key
            if let nested = value.table {
                result += flatten(nested, prefix: path, line: table.line(of: key))
            } else {
                result.append((path, value, table.line(of: key) ?? line))
            }
        }
        return result
    }
}

/// Levenshtein distance, for "did you mean" suggestions.
package func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = previous
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
