import Foundation
import LoupeBase
import Testing

@testable import LoupeModels

/// Grammar-constrained decoding: what a grammar accepts byte by byte, what it refuses to
/// compile, and a seeded property test: random walks over a vocabulary of pieces, each step
/// taking a piece the grammar allows, end in texts that Python's `jsonschema` (the reference,
/// scripts/reference/validate_json_schema.py) finds valid. Needs the peers' Python
/// (`scripts/python-peers`).
@Suite struct GrammarTests {
    static func json(_ text: String) -> JSONValue { (try? JSONValue.parse(text)) ?? .string("bad fixture: " + text) }

    static let calculator = json(
        #"{"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}"#)
    static let search = json(
        #"{"type": "object", "properties": {"query": {"type": "string", "minLength": 1}, "#
            + #""k": {"type": "integer", "minimum": 1, "maximum": 20}}, "required": ["query"]}"#)
    static let finalAnswer = json(
        #"{"type": "object", "properties": {"answer": {"type": "string"}, "#
            + #""citations": {"type": "array", "items": {"type": "integer"}}}, "required": ["answer"]}"#)
    static let nested = json(
        #"{"type": "object", "properties": {"#
            + #""mode": {"enum": ["fast", "slow", 3, null]}, "flag": {"type": "boolean"}, "#
            + #""note": {"type": ["string", "null"], "minLength": 2, "maxLength": 5}, "#
            + #""ratio": {"type": "number", "description": "any number"}, "#
            + #""offset": {"type": "integer", "minimum": -5, "maximum": 5}, "#
            + #""items": {"type": "array", "minItems": 1, "maxItems": 3, "items": {"type": "object", "#
            + #""properties": {"id": {"type": "integer"}}, "required": ["id"], "additionalProperties": false}}, "#
            + #""anything": {}}, "required": ["mode", "items", "offset"]}"#)

    static let tools = [
        ToolSpec(name: "calculator", description: "", parameters: calculator),
        ToolSpec(name: "search", description: "", parameters: search),
        ToolSpec(name: "final_answer", description: "", parameters: finalAnswer),
    ]

    private func accepts(_ grammar: Grammar, _ text: String) -> Bool {
        var matcher = GrammarMatcher(grammar)
        return matcher.consume(Array(text.utf8)) && matcher.canEnd
    }

    @Test func aToolCallBlockMustNameAnOfferedToolWithValidArguments() throws {
        let grammar = try Grammar.toolCalls(Self.tools, choice: .required)
        #expect(
            accepts(
                grammar, #"<tool_call>[{"name": "calculator", "arguments": {"expression": "(17+25)*3"}}]</tool_call>"#))
        #expect(
            accepts(
                grammar,
                #"<tool_call>[{"name": "search", "arguments": {"k":20,"query": "flutter"}}, "#
                    + #"{"name": "final_answer", "arguments": {"answer": "x", "citations": [1, 2]}}]</tool_call>"#))
        // An unknown tool, a missing required argument, an unknown argument, k out of bounds.
        #expect(!accepts(grammar, #"<tool_call>[{"name": "calc", "arguments": {"expression": "1"}}]</tool_call>"#))
        #expect(!accepts(grammar, #"<tool_call>[{"name": "calculator", "arguments": {}}]</tool_call>"#))
        #expect(!accepts(grammar, #"<tool_call>[{"name": "calculator", "arguments": {"expr": "1"}}]</tool_call>"#))
        for k in ["0", "21", "-1", "1.5", "007"] {
            #expect(
                !accepts(
                    grammar,
                    #"<tool_call>[{"name": "search", "arguments": {"query": "a", "k": "# + k + #"}}]</tool_call>"#))
        }
        // Required: no empty list, no plain text; the block is the whole reply.
        #expect(!accepts(grammar, "<tool_call>[]</tool_call>"))
        #expect(!accepts(grammar, "The answer is 126."))
        var matcher = GrammarMatcher(grammar)
        let block = #"<tool_call>[{"name": "calculator", "arguments": {"expression": "1"}}]</tool_call>"#
        let consumed = matcher.consume(Array(block.utf8))
        #expect(consumed)
        #expect(matcher.isComplete && !matcher.accepts(Array(" ".utf8)))
    }

    @Test func aStringLimitBoundsArgumentsTheSchemaLeavesOpen() throws {
        let grammar = try Grammar.toolCalls(Self.tools, choice: .required, stringLimit: 8)
        func call(_ expression: String) -> String {
            #"<tool_call>[{"name": "calculator", "arguments": {"expression": ""# + expression + #""}}]</tool_call>"#
        }
        #expect(accepts(grammar, call("12345678")))
        #expect(!accepts(grammar, call("123456789")))
        #expect(accepts(try Grammar.toolCalls(Self.tools, choice: .required), call("123456789")))
    }

    @Test func autoAllowsTextOrAnEmptyListAndANamedChoiceOnlyThatTool() throws {
        let auto = try Grammar.toolCalls(Self.tools, choice: .auto)
        #expect(accepts(auto, "The answer is 126."))
        #expect(accepts(auto, "<tool_call>[]</tool_call>"))
        #expect(accepts(auto, "<tool"))  // text that merely starts like a block
        #expect(!accepts(auto, #"<tool_call>[{"name": "nope"#))
        let named = try Grammar.toolCalls(Self.tools, choice: .named("search"))
        #expect(accepts(named, #"<tool_call>[{"name": "search", "arguments": {"query": "q"}}]</tool_call>"#))
        #expect(!accepts(named, #"<tool_call>[{"name": "calculator", "arguments": {"expression": "1"}}]</tool_call>"#))
    }

    @Test func jsonSchemasAreEnforcedByteByByte() throws {
        let grammar = try Grammar.json(schema: Self.nested)
        #expect(accepts(grammar, #"{"mode": "fast", "items": [{"id": 1}], "offset": -5}"#))
        #expect(
            accepts(
                grammar, #"{"offset":5,"items":[{"id":-0},{"id":2}],"mode":null,"note":null,"anything":{"a":[1,true]}}"#
            ))
        #expect(!accepts(grammar, #"{"mode": "fast", "items": [], "offset": 0}"#))  // minItems 1
        #expect(!accepts(grammar, #"{"mode": "fast", "items": [{"id": 1}], "offset": 6}"#))
        #expect(!accepts(grammar, #"{"mode": "fast", "items": [{"id": 1}], "offset": 0, "note": "a"}"#))
        #expect(!accepts(grammar, #"{"mode": "fast", "items": [{"id": 1}], "offset": 0, "note": "abcdef"}"#))
        #expect(!accepts(grammar, #"{"mode": "fast", "mode": "slow", "items": [{"id": 1}], "offset": 0}"#))
        #expect(!accepts(grammar, #"{"mode": "medium", "items": [{"id": 1}], "offset": 0}"#))
        #expect(!accepts(grammar, #"{"mode": 3, "items": [{"id": 1, "x": 2}], "offset": 0}"#))
        #expect(accepts(grammar, #"{"mode": 3, "items": [{"id": 1}], "offset": 0, "ratio": -0.5e+3}"#))
        // Strings: escapes, well-formed UTF-8 only, no raw control characters.
        let string = try Grammar.json(schema: Self.json(#"{"type": "string"}"#))
        #expect(accepts(string, #""caf\u00e9 \"é\" 日本""#))
        #expect(!accepts(string, "\"a\nb\""))
        var matcher = GrammarMatcher(string)
        let overlong = matcher.consume([0x22, 0xC0, 0x80])
        #expect(!overlong)
        #expect(accepts(Grammar.jsonObject, #"{"a": [1, {"b": null}], "c": "d"}"#))
        #expect(!accepts(Grammar.jsonObject, "[1]"))
    }

    @Test(arguments: [
        ("pattern", #"{"type": "string", "pattern": "^a"}"#),
        ("format", #"{"type": "string", "format": "date"}"#),
        ("anyOf", #"{"anyOf": [{"type": "string"}]}"#),
        ("$ref", ##"{"$ref": "#/$defs/x"}"##),
        ("additionalProperties", #"{"type": "object", "additionalProperties": true}"#),
        ("minimum", #"{"type": "number", "minimum": 0}"#),
        ("uniqueItems", #"{"type": "array", "uniqueItems": true}"#),
        ("exclusiveMaximum", #"{"type": "integer", "exclusiveMaximum": 3}"#),
    ])
    func unsupportedSchemaFeaturesAreRefusedByName(keyword: String, schema: String) {
        let parameters = Self.json(#"{"type": "object", "properties": {"x": "# + schema + "}}")
        let error = #expect(throws: GrammarError.self) {
            try Grammar.toolCalls([ToolSpec(name: "t", description: "", parameters: parameters)])
        }
        #expect(error?.description.contains(keyword) == true, "\(String(describing: error))")
        #expect(error?.path.hasPrefix("/t/properties/x") == true, "\(String(describing: error))")
    }

    // MARK: Random walks

    /// Pieces a walk chooses from, like a tokenizer's: single bytes (every printable ASCII one,
    /// and UTF-8 lead and continuation bytes), whole characters, and multi-byte fragments that
    /// cross the grammar's own tokens.
    static let pieces: [[UInt8]] = {
        var texts = (0x20..<0x7F).map { String(UnicodeScalar(UInt8($0))) }
        texts += [
            "{\"", "\": ", "\", \"", "\"}", "\"]", "}]", "true", "false", "null", "<tool_call>[", "]</tool_call>",
            "{\"name\": \"", "calculator", "search", "final", "_answer", "\", \"arguments\": ", "expression", "query",
            "answer", "citations", "\"k\": ", "12", "-3", "0.5", "e+3", "\\u00e9", "\\n", "é", "日", "mode", "items",
            "offset", "note", "flag", "ratio", "anything", "\"id\": ", "fast", "slow", ", ",
        ]
        var pieces = texts.map { Array($0.utf8) }
        pieces += [[0xC3], [0xA9], [0xE6], [0x97], [0xA5], [0xF0], [0x9F], [0x98], [0x80]]
        return pieces
    }()
    static let closers = Set(["\"", "}", "]", "]</tool_call>", "\"}", "}]", "\"]"].map { Array($0.utf8) })

    /// A random text the grammar accepts, or why the walk failed.
    static func walk(_ grammar: Grammar, random: inout SplitMix64) -> Result<String, Failure> {
        var matcher = GrammarMatcher(grammar)
        var bytes: [UInt8] = []
        for step in 0..<3000 {
            if matcher.isComplete || (matcher.canEnd && random.uniform() < 0.3) {
                return .success(String(decoding: bytes, as: UTF8.self))
            }
            let allowed = pieces.filter { matcher.accepts($0) }
            // Only the end may come (a number at the top with all its digits): end there.
            if allowed.isEmpty && matcher.canEnd { return .success(String(decoding: bytes, as: UTF8.self)) }
            guard !allowed.isEmpty else {
                return .failure(Failure("dead end after \(String(decoding: bytes, as: UTF8.self).debugDescription)"))
            }
            // Long walks lean to closing what is open, so they end.
            let closing = allowed.filter { closers.contains($0) }
            let pool = step > 60 && !closing.isEmpty && random.uniform() < 0.7 ? closing : allowed
            let piece = pool[Int(random.next() % UInt64(pool.count))]
            matcher.consume(piece)
            bytes += piece
        }
        return .failure(Failure("no end after 3000 pieces: \(String(decoding: bytes, as: UTF8.self).prefix(200))"))
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    @Test func randomWalksUnderAJSONSchemaGiveValidValues() throws {
        var random = SplitMix64(seed: 59)
        var cases: [(schema: JSONValue, text: String)] = []
        for schema in [Self.nested, Self.search, Self.json("{}"), Self.json(#"{"type": ["integer", "string"]}"#)] {
            let grammar = try Grammar.json(schema: schema)
            for _ in 0..<60 { cases.append((schema, try Self.walk(grammar, random: &random).get())) }
        }
        try Self.expectValid(cases)
    }

    @Test func randomWalksUnderAToolGrammarGiveValidCalls() throws {
        var random = SplitMix64(seed: 7)
        let grammar = try Grammar.toolCalls(Self.tools, choice: .required, maxCalls: 3)
        let schemas = Dictionary(uniqueKeysWithValues: Self.tools.map { ($0.name, $0.parameters) })
        var cases: [(schema: JSONValue, text: String)] = []
        for _ in 0..<150 {
            let text = try Self.walk(grammar, random: &random).get()
            try #require(text.hasPrefix("<tool_call>[") && text.hasSuffix("]</tool_call>"), "\(text)")
            let list = try JSONValue.parse(String(text.dropFirst("<tool_call>".count).dropLast("</tool_call>".count)))
            let calls = try #require(list.array, "\(text)")
            #expect(!calls.isEmpty && calls.count <= 3)
            for call in calls {
                let name = try #require(call["name"]?.string, "\(text)")
                let schema = try #require(schemas[name], "unknown tool in \(text)")
                #expect(call.object?.count == 2)
                let arguments = try #require(call["arguments"], "\(text)")
                // The raw text of the arguments, as the model wrote them, is what the tool parses.
                cases.append((schema, arguments.compactJSON))
            }
        }
        try Self.expectValid(cases)
    }

    /// Every text parses and validates in Python's `jsonschema`.
    static func expectValid(_ cases: [(schema: JSONValue, text: String)], distinct: Bool = true) throws {
        let python = SmolLM2Fixtures.repositoryRoot.appendingPathComponent(".venv-peers/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw Failure("\(python) is missing: run scripts/python-peers first")
        }
        let input = cases.map {
            JSONValue.object(["schema": $0.schema, "text": .string($0.text)]).compactJSON
        }.joined(separator: "\n")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            SmolLM2Fixtures.repositoryRoot.appendingPathComponent("scripts/reference/validate_json_schema.py").path
        ]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        stdin.fileHandleForWriting.write(Data((input + "\n").utf8))
        try stdin.fileHandleForWriting.close()
        let output = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let verdicts = output.split(separator: "\n").map(String.init)
        try #require(verdicts.count == cases.count, "the validator answered \(verdicts.count) of \(cases.count)")
        for (verdict, item) in zip(verdicts, cases) {
            #expect(verdict == "ok", "\(item.text) against \(item.schema.compactJSON): \(verdict)")
        }
        // The walks reach the interesting places, not only the shortest texts.
        if distinct { #expect(Set(cases.map(\.text)).count > cases.count / 2) }
    }
}
