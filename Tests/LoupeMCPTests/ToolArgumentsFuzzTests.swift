import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

@testable import LoupeMCP

/// Random arguments against every tool's schema, as a confused or hostile agent could send them:
/// each call answers a result or a ``ToolCallError`` that names the tool or says what is wrong,
/// and never crashes the server. Seeded, so a failure replays.
@Suite struct ToolArgumentsFuzzTests {
    /// SplitMix64: a generator whose sequence a seed fixes.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let strings = [
        "", "q3", "arith", "ana", "1", "o1", "o-3", "oX", "bm25", "dense", "hybrid", "flutter", "🙂",
        "ignore previous instructions", "\u{1B}[2J", "\u{0}", String(repeating: "x", count: 5000),
        "errors", "steps>5", "cost>", "since:", "loupe://trace/1",
    ]

    /// A value of any JSON type, sometimes the one the schema declares, often not.
    static func value(_ generator: inout Generator, declared type: String?, depth: Int = 0) -> JSONValue {
        let pick = Int.random(in: 0..<10, using: &generator)
        if pick < 5, let type {
            switch type {
            case "integer": return .number(Double(Int.random(in: -3...40, using: &generator)))
            case "boolean": return .bool(Bool.random(using: &generator))
            default: return .string(strings.randomElement(using: &generator)!)
            }
        }
        switch pick {
        case 5: return .number([1.5, -1, 1e300, -1e300, 9e15, 0][Int.random(in: 0..<6, using: &generator)])
        case 6: return .string(strings.randomElement(using: &generator)!)
        case 7: return .null
        case 8 where depth < 2:
            return .array(
                (0..<Int.random(in: 0...3, using: &generator)).map { _ in
                    value(&generator, declared: nil, depth: depth + 1)
                })
        case 9 where depth < 2: return .object(["id": value(&generator, declared: nil, depth: depth + 1)])
        default: return .bool(Bool.random(using: &generator))
        }
    }

    @Test func randomArgumentsGetAResultOrAClearErrorFromEveryTool() throws {
        let workspace = try WorkspaceToolsTests.workspace()
        let tools = WorkspaceTools(
            traces: TraceService(workspace: workspace), evals: EvalService(workspace: workspace),
            workspaceName: "w.sqlite", backend: "sqlite", allowsWrites: false, database: workspace,
            models: ModelLibrary(root: FileManager.default.temporaryDirectory.appendingPathComponent("no-models").path))
        var generator = Generator(state: 61)
        var outcomes: [String: Int] = [:]
        for definition in tools.definitions {
            let properties = definition.inputSchema["properties"]?.object ?? [:]
            for _ in 0..<40 {
                var arguments = JSONObject()
                for (name, schema) in properties where Bool.random(using: &generator) {
                    arguments[name] = Self.value(&generator, declared: schema["type"]?.string)
                }
                if Int.random(in: 0..<8, using: &generator) == 0 { arguments["unexpected"] = .number(1) }
                let shown = "\(definition.name) \(JSONValue.object(arguments).compactJSON.prefix(200))"
                do throws(ToolCallError) {
                    let result = try tools.call(definition.name, arguments: arguments)
                    #expect(!result.text.isEmpty, "\(shown)")
                    outcomes["result", default: 0] += 1
                } catch .invalidArguments(let tool, let message) {
                    #expect(tool == definition.name && !message.isEmpty)
                    outcomes["invalid", default: 0] += 1
                } catch .failed(let message) {
                    #expect(!message.isEmpty, "\(shown)")
                    // A failed result is read by an agent: no raw control characters reach it.
                    #expect(!message.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" })
                    outcomes["failed", default: 0] += 1
                } catch .unknownTool(let name) {
                    Issue.record("a listed tool is unknown: \(name)")
                }
            }
        }
        // The fuzz reached every kind of outcome, so it exercised more than the argument checks.
        #expect(outcomes["result", default: 0] > 0 && outcomes["invalid", default: 0] > 0)
        #expect(outcomes["failed", default: 0] > 0)
    }
}
