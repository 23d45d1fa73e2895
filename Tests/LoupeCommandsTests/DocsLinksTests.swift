import Foundation
import Testing

/// The docs point at files: README and the guides link each other, and the map in
/// docs/ARCHITECTURE.md names the files a new panel, importer, kernel or command touches. When
/// a file moves, these tests name the doc that still points at its old place. The map's module
/// table is the picture `ModuleGraphTests` enforces, row for row.
@Suite struct DocsLinksTests {
    static let root = TestEnvironment.repositoryRoot

    /// README.md and every Markdown file under docs/, as paths relative to the repository.
    static func documents() throws -> [String] {
        let docs = root.appendingPathComponent("docs")
        let enumerator = try #require(FileManager.default.enumerator(atPath: docs.path), "docs/ is missing")
        var found = ["README.md"]
        for case let file as String in enumerator where file.hasSuffix(".md") { found.append("docs/" + file) }
        return found.sorted()
    }

    static func exists(_ path: String, from directory: URL) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent(path).standardizedFileURL.path)
    }

    @Test func everyRelativeLinkInTheDocsResolves() throws {
        let link = /\]\(([^)\s#]+)(#[^)]*)?\)/
        let documents = try Self.documents()
        #expect(documents.contains("docs/ARCHITECTURE.md"))
        for document in documents {
            let url = Self.root.appendingPathComponent(document)
            let text = try String(contentsOf: url, encoding: .utf8)
            for match in text.matches(of: link) {
                let target = String(match.output.1)
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                #expect(
                    Self.exists(target, from: url.deletingLastPathComponent()),
                    "\(document) links to \(target), which does not exist")
            }
        }
    }

    /// A segment that stands for a name the reader picks: `X/`, `XPanel.swift`, `x.c`,
    /// `<Module>Tests`, `*.py`, `YYYY-MM-DD-slug.md`, `NAME.txt`, `Area/`, `fetch-x`.
    static func isPlaceholder(_ segment: Substring) -> Bool {
        segment.contains(/^[Xx]([A-Z.]|$)/) || segment.contains("<") || segment.contains("*")
            || segment.contains("YYYY") || segment.hasPrefix("NAME") || segment == "Area" || segment.hasSuffix("-x")
    }

    @Test func everyPathTheMapNamesExists() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let code = /`([^`\s]+)[^`]*`/
        let roots = [
            "Sources/", "Tests/", "Fuzz/", "scripts/", "docs/", "notebooks/", "themes/", "sample-data/", ".ci/",
        ]
        var checked = 0
        for match in text.matches(of: code) {
            let path = match.output.1
            guard roots.contains(where: { path.hasPrefix($0) }) else { continue }
            // Up to the first placeholder: `Sources/LoupeApp/Panels/X/` checks `Sources/LoupeApp/Panels`.
            let segments = path.split(separator: "/")
            let known = segments.prefix { !Self.isPlaceholder($0) }.joined(separator: "/")
            checked += 1
            #expect(
                Self.exists(known, from: Self.root),
                "docs/ARCHITECTURE.md names \(path), but \(known) does not exist: update the map")
        }
        #expect(checked > 30, "the map names \(checked) paths; the test no longer finds them")
    }

    /// The map's module table, between its `module-graph` markers: module → its imports.
    static func mapTable() throws -> [String: Set<String>] {
        let text = try String(contentsOf: root.appendingPathComponent("docs/ARCHITECTURE.md"), encoding: .utf8)
        let start = try #require(text.range(of: "<!-- module-graph:start -->"), "the table's start marker is missing")
        let end = try #require(text.range(of: "<!-- module-graph:end -->"), "the table's end marker is missing")
        var rows: [String: Set<String>] = [:]
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 2, cells[0] != "module", !cells[0].hasPrefix("---") else { continue }
            rows[cells[0]] =
                cells[1] == "—"
                ? [] : Set(cells[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        }
        return rows
    }

    @Test func theMapsModuleTableIsTheModuleGraphTestsPicture() throws {
        let map = try Self.mapTable()
        #expect(!map.isEmpty)
        for module in Set(map.keys).union(ModuleGraphTests.imports.keys).sorted() {
            #expect(
                map[module] == ModuleGraphTests.imports[module],
                """
                docs/ARCHITECTURE.md's table says \(module) imports \(map[module]?.sorted() ?? []), \
                ModuleGraphTests says \(ModuleGraphTests.imports[module]?.sorted() ?? []): make them agree
                """)
        }
    }
}
