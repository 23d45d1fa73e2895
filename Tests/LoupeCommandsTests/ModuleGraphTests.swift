import Foundation
import Testing

/// The module table in docs/ARCHITECTURE.md is the rule for who imports whom: a module that
/// imports something its row does not name fails, and so does a row naming an import no file
/// makes any more, so the table and the code cannot drift apart.
@Suite struct ModuleGraphTests {
    /// Imports every module may make without a row saying so (the toolchain's own).
    static let system: Set<String> = [
        "Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Synchronization",
    ]

    /// The table between the `module-graph` markers: module → the imports it may make.
    static func table() throws -> [String: Set<String>] {
        let text = try String(
            contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let start = try #require(text.range(of: "<!-- module-graph:start -->"), "the table's start marker is missing")
        let end = try #require(text.range(of: "<!-- module-graph:end -->"), "the table's end marker is missing")
        var rules: [String: Set<String>] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2, cells[0] != "module", !cells[0].hasPrefix("---") else { continue }
            let imports =
                cells[1] == "—" ? [] : cells[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            rules[cells[0]] = Set(imports)
        }
        return rules
    }

    /// Every module under `Sources/` that has Swift files: module → import → the files importing it.
    static func imports() throws -> [String: [String: [String]]] {
        let sources = TestEnvironment.repositoryRoot.appendingPathComponent("Sources")
        var found: [String: [String: [String]]] = [:]
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let directory = sources.appendingPathComponent(module)
            guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
            var modules: [String: [String]] = [:]
            var hasSwift = false
            for case let file as String in files where file.hasSuffix(".swift") {
                hasSwift = true
                let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ")
                    guard let index = words.firstIndex(of: "import"), words[..<index].allSatisfy({ $0.hasPrefix("@") })
                    else { continue }
                    guard index + 1 < words.count else { continue }
                    let name = String(words[index + 1])
                    if !system.contains(name) { modules[name, default: []].append("\(module)/\(file)") }
                }
            }
            if hasSwift { found[module] = modules }
        }
        return found
    }

    @Test func everyImportIsAllowedByTheTableAndEveryRowIsUsed() throws {
        let rules = try Self.table()
        let actual = try Self.imports()
        #expect(!rules.isEmpty && !actual.isEmpty)
        #expect(
            Set(actual.keys) == Set(rules.keys),
            "modules with Swift files and rows of the table differ: \(Set(actual.keys).symmetricDifference(rules.keys).sorted())"
        )
        for (module, imports) in actual.sorted(by: { $0.key < $1.key }) {
            let allowed = rules[module] ?? []
            for (name, files) in imports.sorted(by: { $0.key < $1.key }) where !allowed.contains(name) {
                Issue.record(
                    "\(module) imports \(name) (\(files.sorted().prefix(3).joined(separator: ", "))), which docs/ARCHITECTURE.md's table does not allow"
                )
            }
            for name in allowed.subtracting(imports.keys).sorted() {
                Issue.record(
                    "docs/ARCHITECTURE.md says \(module) imports \(name), but no file of it does: update the table")
            }
        }
    }

    @Test func theCommandLanguageKnowsNoScreenAndTheEngineKnowsNoStoreOrKit() throws {
        let rules = try Self.table()
        let screens: Set<String> = ["LoupeApp", "LoupeTerminal", "CNCurses"]
        #expect(rules["LoupeCommands", default: []].isDisjoint(with: screens))
        let above: Set<String> = ["LoupeStore", "LoupeKit", "LoupeApp", "LoupeCommands", "LoupeTUI", "LoupeTerminal"]
        for engine in ["LoupeTensor", "LoupeModels", "LoupeRetrieval", "LoupeProfiling", "LoupeAgents", "LoupeEvals"] {
            #expect(rules[engine, default: []].isDisjoint(with: above), "\(engine) must not import \(above)")
        }
        #expect(rules["LoupeTUI"] == [])
        // The workspace is LoupeStore's alone; LoupeProfiling opens a foreign file read-only (an
        // Nsight Systems export is an SQLite database).
        for (module, imports) in rules where imports.contains("GRDB") {
            #expect(module == "LoupeStore" || module == "LoupeProfiling")
        }
        for (module, imports) in rules where imports.contains("CNCurses") { #expect(module == "LoupeTerminal") }
    }
}
