import Foundation
import Testing

/// Who may import whom, read from the files themselves. The picture is here, in code:
/// `imports` is each module's row (a module importing something its row does not name fails, and
/// so does a row naming an import no file makes any more); `layers` orders the modules, and an
/// arrow between two of ours that does not point to a lower layer fails unless `upward` names it
/// with its reason. Package.swift must declare every module a target's files import, tests
/// included: a module that compiles only through another target's dependencies breaks the day
/// that target drops it.
///
/// A new module: a row in `imports`, a place in `layers`, then Package.swift.
@Suite struct ModuleGraphTests {
    /// Imports every module may make without a row saying so (the toolchain's own).
    static let system: Set<String> = [
        "Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Synchronization",
        "Testing", "XCTest",
    ]

    /// Module → the imports its files may make (ours, C shims, and other packages' products).
    static let imports: [String: Set<String>] = [
        "LoupeBase": ["CZlib", "CZstd"],
        "LoupeTensor": ["CKernels", "COpenBLAS", "LoupeBase"],
        "LoupeModels": ["CKernels", "LoupeBase", "LoupeTensor"],
        "LoupeRetrieval": ["CKernels", "LoupeBase", "LoupeTensor"],
        "LoupeProfiling": ["CKernels", "GRDB", "LoupeBase", "LoupeTensor"],
        "LoupeAgents": ["LoupeBase"],
        "LoupeEvals": ["LoupeAgents", "LoupeBase", "Yams"],
        "LoupeOTLP": ["LoupeAgents", "LoupeBase", "SwiftProtobuf"],
        "LoupeStore": ["GRDB", "GRDBSQLite", "LoupeBase"],
        "LoupePostgres": ["Logging", "LoupeStore", "NIOCore", "NIOPosix", "NIOSSL", "PostgresNIO"],
        "LoupeKit": [
            "LoupeAgents", "LoupeBase", "LoupeEvals", "LoupeModels", "LoupeOTLP", "LoupeProfiling", "LoupeRetrieval",
            "LoupeStore", "LoupeTUI", "LoupeTensor",
        ],
        "LoupeReceiver": [
            "GRPCCore", "GRPCNIOTransportHTTP2", "GRPCProtobuf", "Hummingbird", "Logging", "LoupeBase", "LoupeKit",
            "LoupeOTLP", "NIOCore", "ServiceLifecycle", "SwiftProtobuf",
        ],
        "LoupeMCP": [
            "Hummingbird", "Logging", "LoupeAgents", "LoupeBase", "LoupeEvals", "LoupeKit", "LoupeModels",
            "LoupeProfiling", "LoupeRetrieval", "LoupeStore", "MCP",
        ],
        "LoupeOpenAI": ["LoupeAgents", "LoupeBase", "LoupeKit", "LoupeModels"],
        "LoupeServing": [
            "Hummingbird", "Logging", "LoupeAgents", "LoupeBase", "LoupeKit", "LoupeModels", "LoupeOpenAI",
            "LoupeReceiver", "NIOCore", "Prometheus", "ServiceLifecycle",
        ],
        "LoupeCommands": [
            "ArgumentParser", "AsyncHTTPClient", "CReadline", "LoupeAgents", "LoupeBase", "LoupeEvals", "LoupeKit",
            "LoupeMCP", "LoupeModels", "LoupeOTLP", "LoupeProfiling", "LoupePostgres", "LoupeReceiver",
            "LoupeRetrieval", "LoupeServing", "LoupeStore", "LoupeTUI", "LoupeTensor", "NIOCore", "NIOHTTP1",
        ],
        "LoupeTUI": ["LoupeBase"],
        "LoupeTerminal": ["CNCurses", "LoupeBase", "LoupeTUI"],
        "LoupeApp": [
            "LoupeAgents", "LoupeBase", "LoupeEvals", "LoupeKit", "LoupeProfiling", "LoupeRetrieval", "LoupeStore",
            "LoupeTUI", "LoupeTerminal",
        ],
        "LoupeBench": [
            "ArgumentParser", "AsyncHTTPClient", "LoupeAgents", "LoupeApp", "LoupeBase", "LoupeCommands", "LoupeEvals",
            "LoupeKit", "LoupeModels", "LoupeOTLP", "LoupePostgres", "LoupeProfiling", "LoupeRetrieval", "LoupeStore",
            "LoupeTUI", "LoupeTensor", "NIOCore", "NIOHTTP1",
        ],
        "loupe": [
            "LoupeApp", "LoupeBench", "LoupeCommands", "LoupeKit", "LoupeReceiver", "LoupeStore", "LoupeTUI",
            "LoupeTerminal",
        ],
    ]

    /// Our modules from the bottom up: an import points to a module of a lower layer. Engine
    /// modules sit under the workspace, which knows none of them; the screen (LoupeTUI,
    /// LoupeTerminal, LoupeApp) sits above the command language, which never sees it.
    static let layers: [[String]] = [
        ["LoupeBase"],
        ["LoupeTensor", "LoupeAgents"],
        ["LoupeModels", "LoupeRetrieval", "LoupeProfiling", "LoupeEvals", "LoupeOTLP"],
        ["LoupeStore"],
        ["LoupePostgres"],
        ["LoupeKit"],
        ["LoupeReceiver", "LoupeMCP", "LoupeOpenAI"],
        ["LoupeServing"],
        ["LoupeCommands"],
        ["LoupeTUI"],
        ["LoupeTerminal"],
        ["LoupeApp"],
        ["LoupeBench"],
        ["loupe"],
    ]

    /// The arrows that point up, each with why. Adding one is a decision: write it here and in
    /// docs/ARCHITECTURE.md.
    static let upward: [String: String] = [
        "LoupeKit -> LoupeTUI": "Theme: Kit reads theme files (decision 2026-11-22-theme-loading-in-kit)",
        "LoupeCommands -> LoupeTUI":
            "Size for TUIHost (the first frame `loupe bench tui` times), Theme for `loupe theme`, Sparkline for `loupe sae`",
    ]

    /// Every directory of Swift files under `Sources/`, `Tests/` and `Fuzz/` (a target each, named
    /// after it): target → import → the files importing it.
    static func actualImports(under folders: [String] = ["Sources", "Tests", "Fuzz"]) throws -> [String: [String:
        [String]]]
    {
        var found: [String: [String: [String]]] = [:]
        for folder in folders {
            let root = TestEnvironment.repositoryRoot.appendingPathComponent(folder)
            for module in try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() {
                let directory = root.appendingPathComponent(module)
                guard let files = FileManager.default.enumerator(atPath: directory.path) else { continue }
                var modules: [String: [String]] = [:]
                var hasSwift = false
                for case let file as String in files where file.hasSuffix(".swift") {
                    hasSwift = true
                    let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
                    // Lines inside a multi-line string literal (a Python script in a test) import nothing.
                    var inString = false
                    for line in text.split(separator: "\n") {
                        if line.split(separator: "\"\"\"", omittingEmptySubsequences: false).count % 2 == 0 {
                            inString.toggle()
                            continue
                        }
                        if inString { continue }
                        let words = line.split(separator: " ")
                        guard let index = words.firstIndex(of: "import"),
                            words[..<index].allSatisfy({ $0.hasPrefix("@") }), index + 1 < words.count
                        else { continue }
                        let name = String(words[index + 1])
                        if !system.contains(name) { modules[name, default: []].append("\(module)/\(file)") }
                    }
                }
                if hasSwift { found[module] = modules }
            }
        }
        return found
    }

    /// The dependencies Package.swift declares for `target`: the names in its `dependencies: […]`,
    /// products by their name (which is their module's here).
    static func declaredDependencies(of target: String, in manifest: String) throws -> Set<String> {
        let declaration = try Regex(#"\.(target|testTarget|executableTarget)\(\s*name: "\#(target)""#)
        let start = try #require(manifest.firstMatch(of: declaration), "Package.swift has no target \(target)")
        let rest = manifest[start.range.upperBound...]
        // A target with no dependencies has none before the next target starts.
        let end =
            rest.firstMatch(of: /\.(target|testTarget|executableTarget|systemLibrary)\(/)?.range.lowerBound
            ?? rest.endIndex
        guard let open = rest[..<end].range(of: "dependencies: [") else { return [] }
        var depth = 1
        var index = open.upperBound
        while depth > 0, index < rest.endIndex {
            if rest[index] == "[" { depth += 1 }
            if rest[index] == "]" { depth -= 1 }
            index = rest.index(after: index)
        }
        let list = rest[open.upperBound..<index].replacing(/package: "[^"]*"/, with: "")
        return Set(list.matches(of: /"([^"]+)"/).map { String($0.output.1) })
    }

    @Test func everyImportIsAllowedAndEveryRowIsUsed() throws {
        let actual = try Self.actualImports(under: ["Sources"])
        #expect(!actual.isEmpty)
        #expect(
            Set(actual.keys) == Set(Self.imports.keys),
            "modules with Swift files and rows differ: \(Set(actual.keys).symmetricDifference(Self.imports.keys).sorted())"
        )
        for (module, imports) in actual.sorted(by: { $0.key < $1.key }) {
            let allowed = Self.imports[module] ?? []
            for (name, files) in imports.sorted(by: { $0.key < $1.key }) where !allowed.contains(name) {
                Issue.record(
                    "\(module) imports \(name) (\(files.sorted().prefix(3).joined(separator: ", "))), which its row in ModuleGraphTests.imports does not allow"
                )
            }
            for name in allowed.subtracting(imports.keys).sorted() {
                Issue.record("ModuleGraphTests says \(module) imports \(name), but no file of it does: update its row")
            }
        }
    }

    @Test func everyArrowPointsDownOrIsANamedException() throws {
        var layer: [String: Int] = [:]
        for (level, modules) in Self.layers.enumerated() {
            for module in modules {
                #expect(layer[module] == nil, "\(module) is in two layers")
                layer[module] = level
            }
        }
        #expect(Set(layer.keys) == Set(Self.imports.keys), "every module has a row and a layer")
        var arrowsUp: Set<String> = []
        for (module, imports) in Self.imports {
            for name in imports {
                guard let from = layer[module], let to = layer[name] else { continue }
                if to >= from { arrowsUp.insert("\(module) -> \(name)") }
            }
        }
        for arrow in arrowsUp.subtracting(Self.upward.keys).sorted() {
            Issue.record("\(arrow) points up (or sideways): move the code down, or name the arrow in `upward` with why")
        }
        for arrow in Set(Self.upward.keys).subtracting(arrowsUp).sorted() {
            Issue.record("`upward` names \(arrow), which no longer points up or is gone: remove it")
        }
    }

    @Test func theCommandLanguageKnowsNoScreenAndTheEngineKnowsNoStoreOrKit() {
        let rules = Self.imports
        let screens: Set<String> = ["LoupeApp", "LoupeTerminal", "CNCurses"]
        #expect(rules["LoupeCommands", default: []].isDisjoint(with: screens))
        let above: Set<String> = ["LoupeStore", "LoupeKit", "LoupeApp", "LoupeCommands", "LoupeTUI", "LoupeTerminal"]
        for engine in ["LoupeTensor", "LoupeModels", "LoupeRetrieval", "LoupeProfiling", "LoupeAgents", "LoupeEvals"] {
            #expect(rules[engine, default: []].isDisjoint(with: above), "\(engine) must not import \(above)")
        }
        #expect(rules["LoupeTUI"] == ["LoupeBase"])
        // The workspace is LoupeStore's alone; LoupeProfiling opens a foreign file read-only (an
        // Nsight Systems export is an SQLite database).
        for (module, imports) in rules where imports.contains("GRDB") {
            #expect(module == "LoupeStore" || module == "LoupeProfiling")
        }
        for (module, imports) in rules where imports.contains("CNCurses") { #expect(module == "LoupeTerminal") }
        // The benches are a leaf: only the executable adds them to the command tree, and only they
        // and the executable see both the commands and the TUI program.
        for (module, imports) in rules where imports.contains("LoupeBench") { #expect(module == "loupe") }
        for (module, imports) in rules where imports.isSuperset(of: ["LoupeApp", "LoupeCommands"]) {
            #expect(module == "loupe" || module == "LoupeBench", "\(module) sees both LoupeApp and LoupeCommands")
        }
    }

    @Test func packageSwiftDeclaresEveryImportOfEveryTarget() throws {
        let manifest = try String(
            contentsOf: TestEnvironment.repositoryRoot.appendingPathComponent("Package.swift"), encoding: .utf8)
        let actual = try Self.actualImports()
        #expect(actual["LoupeCommandsTests"] != nil && actual["LoupeBase"] != nil)
        for (target, imports) in actual.sorted(by: { $0.key < $1.key }) {
            let declared = try Self.declaredDependencies(of: target, in: manifest)
            for (name, files) in imports.sorted(by: { $0.key < $1.key }) where !declared.contains(name) {
                Issue.record(
                    "\(target) imports \(name) (\(files.sorted().prefix(2).joined(separator: ", "))) but Package.swift does not declare it"
                )
            }
        }
    }

    /// One door per table: nothing in Sources downcasts a database to the SQLite `Workspace`
    /// for a fast path (the review found 10). What one backend does faster is a ``SQLDatabase``
    /// method with a default in SQL (`shardedRowBytes`, `writeStatement(_:_:bytes:)`,
    /// `foldLog(past:)`), which the Workspace implements its own way.
    @Test func nothingDowncastsToTheSQLiteWorkspace() throws {
        let root = TestEnvironment.repositoryRoot.appendingPathComponent("Sources")
        let downcast = /as[?!]\s*Workspace\b/
        var found: [String] = []
        var files = 0
        let enumerator = try #require(FileManager.default.enumerator(atPath: root.path))
        for case let file as String in enumerator where file.hasSuffix(".swift") {
            files += 1
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains(downcast) {
                found.append("\(file):\(number + 1)")
            }
        }
        #expect(files > 100)
        #expect(found.isEmpty, "downcasts to Workspace: \(found)")
    }
}
