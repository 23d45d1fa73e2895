import Foundation
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

@testable import LoupeMCP

/// `trace_tokens` on an imported OTLP trace whose two model spans carry tokens (one of 5 tokens,
/// one of two choices of 3): a page is `loupe trace tokens --json`'s spans, cut where the limit
/// falls, and the pages together give every token once.
@Suite struct TraceTokensToolTests {
    static func token(_ text: String, _ probability: Double, _ runnerUp: Double) -> GeneratedTokens.Token {
        GeneratedTokens.Token(
            id: Int32(text.unicodeScalars.first?.value ?? 0), text: text, logprob: log(probability), entropy: 0.5,
            alternatives: [
                .init(id: 1, text: text, logprob: log(probability)),
                .init(id: 2, text: "other", logprob: log(runnerUp)),
            ])
    }

    /// The first span's 5 tokens; the second's two choices. One token's text would clear the screen.
    static let first = GeneratedTokens(tokens: [
        token("The", 0.9, 0.05), token(" sum\u{1b}[2J", 0.25, 0.2), token(" is", 0.5, 0.45), token(" 1", 0.8, 0.1),
        token("26", 0.7, 0.2),
    ])
    static let second = [
        GeneratedTokens(tokens: [token("A", 0.6, 0.3), token("B", 0.6, 0.3), token("C", 0.6, 0.3)]),
        GeneratedTokens(tokens: [token("x", 0.2, 0.15), token("y", 0.9, 0.01), token("z", 0.9, 0.01)]),
    ]

    /// OTLP's `AnyValue` for plain JSON, as an exporter sends a structured attribute.
    static func anyValue(_ value: JSONValue) -> JSONValue {
        switch value {
        case .null: return .object([:])
        case .bool(let b): return .object(["boolValue": .bool(b)])
        case .number(let n): return .object(["doubleValue": .number(n)])
        case .string(let s): return .object(["stringValue": .string(s)])
        case .array(let items): return .object(["arrayValue": .object(["values": .array(items.map(anyValue))])])
        case .object(let members):
            return .object([
                "kvlistValue": .object([
                    "values": .array(members.map { .object(["key": .string($0.0), "value": anyValue($0.1)]) })
                ])
            ])
        }
    }

    static func workspace() throws -> Workspace {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "loupe-mcp-tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func span(_ id: String, parent: String?, name: String, tokens: [GeneratedTokens]?) -> JSONValue {
            var attributes: [JSONValue] = [
                .object([
                    "key": "gen_ai.operation.name", "value": anyValue(.string(parent == nil ? "invoke_agent" : "chat")),
                ])
            ]
            if let tokens {
                attributes.append(
                    .object([
                        "key": .string(GeneratedTokens.attribute),
                        "value": anyValue(GeneratedTokens.attributeValue(tokens)),
                    ]))
            }
            var members: JSONObject = [
                "traceId": "6513270e269e0d37f2a74de452e6b4ff", "spanId": .string(id), "name": .string(name),
                "kind": .number(1), "startTimeUnixNano": "1767225600000000000",
                "endTimeUnixNano": "1767225601000000000", "attributes": .array(attributes),
            ]
            if let parent { members["parentSpanId"] = .string(parent) }
            return .object(members)
        }
        let spans = [
            span("0c5c7fd0a6a3a450", parent: nil, name: "invoke_agent local", tokens: nil),
            span("d23f0824128b2f33", parent: "0c5c7fd0a6a3a450", name: "chat smollm2", tokens: [first]),
            span("e11f0824128b2f34", parent: "0c5c7fd0a6a3a450", name: "chat smollm2 again", tokens: second),
        ]
        let file: JSONValue = .object([
            "resourceSpans": .array([.object(["scopeSpans": .array([.object(["spans": .array(spans)])])])])
        ])
        let path = directory.appendingPathComponent("local.json").path
        try file.compactJSON.write(toFile: path, atomically: true, encoding: .utf8)
        let workspace = try Workspace(path: directory.appendingPathComponent("w.sqlite").path)
        _ = try TraceService(workspace: workspace).importFiles([path])
        return workspace
    }

    static func tools(_ workspace: Workspace) -> WorkspaceTools {
        WorkspaceTools(
            traces: TraceService(workspace: workspace), evals: EvalService(workspace: workspace),
            workspaceName: "w.sqlite", backend: "sqlite", allowsWrites: false)
    }

    @Test func onePageIsTheKitsJSONOfEverySpanWithTokens() throws {
        let workspace = try Self.workspace()
        let found = try TraceService(workspace: workspace).generatedTokens(trace: 1)
        #expect(found.map(\.sequences) == [[Self.first], Self.second])
        let result = try Self.tools(workspace).call("trace_tokens", arguments: ["id": .number(1)])
        let structured = result.structured
        #expect(structured["spans"] == .array(found.map(\.json)))
        #expect(structured["total_tokens"] == .number(11) && structured["shown_tokens"] == .number(11))
        #expect(structured["next_cursor"] == .null && structured["more"] == nil)
        // p < 0.3: " sum" (0.25) and "x" (0.2); top two within 0.1: " sum" (0.25 vs 0.2), " is" (0.5 vs
        // 0.45) and "x" (0.2 vs 0.15).
        #expect(structured["low_confidence"] == .number(2) && structured["near_ties"] == .number(3))
        let tokens = try #require(structured["spans"]?.array?.first?["choices"]?.array?.first?.array)
        #expect(tokens.map { $0["low_confidence"] } == [false, true, false, false, false].map(JSONValue.bool))
        #expect(tokens[1]["probability"] == .number(exp(log(0.25))))
        #expect(result.text.contains("<untrusted-data>") && !result.text.contains("\u{1b}"), "\(result.text)")
        #expect(
            result.text.contains("trace 1: 2 spans with generated tokens, 11 tokens (2 low-confidence, 3 near-ties)"))
    }

    @Test func pagesCutAtTheLimitAndTogetherGiveEveryTokenOnce() throws {
        let workspace = try Self.workspace()
        let tools = Self.tools(workspace)
        var arguments: JSONObject = ["id": .number(1), "limit": .number(4)]
        var pages: [JSONValue] = []
        while pages.count < 10 {
            let page = try tools.call("trace_tokens", arguments: arguments).structured
            pages.append(page)
            guard let cursor = page["next_cursor"]?.string else { break }
            #expect(page["more"]?["cursor"] == .string(cursor))
            arguments["cursor"] = .string(cursor)
        }
        #expect(pages.map { $0["next_cursor"] } == [.string("o4"), .string("o8"), .null])
        #expect(pages.map { $0["shown_tokens"] } == [.number(4), .number(4), .number(3)])
        // Gather each span's choices from the pages, each token where its window says it starts.
        var gathered: [String: [[JSONValue]]] = [:]
        for span in pages.flatMap({ $0["spans"]?.array ?? [] }) {
            let id = try #require(span["span"]?.string)
            let choices = try #require(span["choices"]?.array)
            let from = span["window"]?["from"]?.array?.compactMap(\.int) ?? choices.map { _ in 0 }
            var known = gathered[id] ?? choices.map { _ in [] }
            for (index, choice) in choices.enumerated() {
                #expect(known[index].count == Int(from[index]), "span \(id) choice \(index) skips or repeats")
                known[index] += choice.array ?? []
            }
            gathered[id] = known
        }
        let found = try TraceService(workspace: workspace).generatedTokens(trace: 1)
        for item in found {
            #expect(gathered[item.row.spanID] == item.sequences.map { $0.tokens.map(TraceService.TokenSpan.tokenJSON) })
        }
        // The first page cuts the first span after 4 of its 5 tokens and says so.
        let cut = try #require(pages[0]["spans"]?.array?.first)
        #expect(cut["window"] == .object(["from": .array([.number(0)]), "of": .array([.number(5)])]))
    }

    @Test func aSpanIsChosenByIdOrOrdinalAndMistakesAreNamed() throws {
        let workspace = try Self.workspace()
        let tools = Self.tools(workspace)
        let byID = try tools.call("trace_tokens", arguments: ["id": .number(1), "span": "e11f0824128b2f34"])
        let found = try TraceService(workspace: workspace).generatedTokens(trace: 1, span: "e11f0824128b2f34")
        #expect(byID.structured["spans"] == .array(found.map(\.json)) && found.count == 1)
        let ordinal = try #require(found.first?.row.ordinal)
        let byOrdinal = try tools.call("trace_tokens", arguments: ["id": .number(1), "span": .string("\(ordinal)")])
        #expect(byOrdinal.structured["spans"] == byID.structured["spans"])

        let none = try tools.call("trace_tokens", arguments: ["id": .number(1), "span": "0c5c7fd0a6a3a450"])
        #expect(none.structured["total_tokens"] == .number(0) && none.text.contains("has no generated tokens"))
        #expect(throws: ToolCallError.failed("trace 1 has no span nope (loupe trace show 1 --json lists them)")) {
            try tools.call("trace_tokens", arguments: ["id": .number(1), "span": "nope"])
        }
        do {
            _ = try tools.call("trace_tokens", arguments: ["id": .number(7)])
            Issue.record("trace 7 does not exist")
        } catch {
            #expect(error.description.contains("no such trace"), "\(error)")
        }
        #expect(throws: ToolCallError.self) {
            try tools.call("trace_tokens", arguments: ["id": .number(1), "cursor": "later"])
        }
        #expect(throws: ToolCallError.self) {
            try tools.call("trace_tokens", arguments: ["id": .number(1), "limit": .number(0)])
        }
    }
}
