import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// `loupe trace tokens` through the real binary, on a trace imported from OTLP/JSON whose model
/// span carries the tokens ``GeneratedTokens``' own encoder wrote.
@Suite(.serialized) struct TraceTokensCommandTests {
    /// Three tokens as a sampler reports them (Float log-probabilities widened to Double): a sure
    /// one, a low-confidence near-tie whose text carries an escape sequence, and a near-tie.
    static let generated = GeneratedTokens(tokens: [
        .init(
            id: 504, text: "The", logprob: Double(Float(log(0.9))), entropy: 0.41,
            alternatives: [
                .init(id: 504, text: "The", logprob: Double(Float(log(0.9)))),
                .init(id: 339, text: "A", logprob: Double(Float(log(0.05)))),
            ]),
        .init(
            id: 1_210, text: " answer\u{1b}[2J", logprob: Double(Float(log(0.25))), entropy: 1.91,
            alternatives: [
                .init(id: 3_001, text: " result", logprob: Double(Float(log(0.3)))),
                .init(id: 1_210, text: " answer\u{1b}[2J", logprob: Double(Float(log(0.25)))),
                .init(id: 77, text: "\n", logprob: Double(Float(log(0.2)))),
            ]),
        .init(
            id: 318, text: " is", logprob: Double(Float(log(0.5))), entropy: 0.9,
            alternatives: [
                .init(id: 318, text: " is", logprob: Double(Float(log(0.5)))),
                .init(id: 373, text: " was", logprob: Double(Float(log(0.45)))),
            ]),
    ])

    /// Plain JSON as OTLP's `AnyValue`, the way an exporter sends a structured attribute.
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

    /// An OTLP/JSON file of one trace: an agent span and a local model's chat span with `tokens`.
    static func otlp(tokens: JSONValue) -> String {
        func span(_ id: String, parent: String?, name: String, attributes: [(String, JSONValue)]) -> JSONValue {
            var members: [(String, JSONValue)] = [
                ("traceId", "6513270e269e0d37f2a74de452e6b4ff"), ("spanId", .string(id)), ("name", .string(name)),
                ("kind", .number(1)), ("startTimeUnixNano", "1767225600000000000"),
                ("endTimeUnixNano", "1767225601000000000"),
                (
                    "attributes",
                    .array(attributes.map { .object(["key": .string($0.0), "value": anyValue($0.1)]) })
                ),
            ]
            if let parent { members.append(("parentSpanId", .string(parent))) }
            return .object(JSONObject(members))
        }
        let spans: [JSONValue] = [
            span(
                "0c5c7fd0a6a3a450", parent: nil, name: "invoke_agent local",
                attributes: [
                    ("gen_ai.operation.name", "invoke_agent")
                ]),
            span(
                "d23f0824128b2f33", parent: "0c5c7fd0a6a3a450", name: "chat smollm2",
                attributes: [
                    ("gen_ai.operation.name", "chat"), ("gen_ai.request.model", "smollm2"),
                    (GeneratedTokens.attribute, tokens),
                ]),
        ]
        let file: JSONValue = .object([
            "resourceSpans": .array([.object(["scopeSpans": .array([.object(["spans": .array(spans)])])])])
        ])
        return file.compactJSON
    }

    @Test func printsEachTokensProbabilityAndAlternatives() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let trace = directory + "/local.json"
        try Self.otlp(tokens: GeneratedTokens.attributeValue([Self.generated])).write(
            toFile: trace, atomically: true, encoding: .utf8)
        let imported = try TestEnvironment.run(["--workspace", file, "trace", "import", trace])
        #expect(imported.status == 0, "\(imported.error)")

        // The reference: the log-probabilities as the workspace stored them, decoded on their own.
        let workspace = try Workspace(path: file)
        let service = TraceService(tables: TraceTables(workspace))
        let rows = try service.load(1).spans
        let model = try #require(rows.first { $0.name == "chat smollm2" })
        let stored = try GeneratedTokens.decode(
            try service.payload(trace: 1, ordinal: model.ordinal).payload.attributes, span: model.spanID)
        #expect(stored == [Self.generated])
        let tokens = stored[0].tokens

        let text = try TestEnvironment.run(["--workspace", file, "trace", "tokens", "1"])
        #expect(text.status == 0, "\(text.error)")
        let output = text.output
        #expect(!output.contains("\u{1b}"), "an escape sequence reached the terminal: \(output)")
        #expect(output.contains("chat smollm2: 3 tokens, 1 low, 2 near-ties"), "\(output)")
        #expect(!output.contains("invoke_agent"), "a span without tokens was listed: \(output)")
        let lines = output.split(separator: "\n").map(String.init)
        for (position, token) in tokens.enumerated() {
            let line = try #require(lines.first { $0.hasPrefix(String(repeating: " ", count: 6) + "\(position)  ") })
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            // The printed probability is exp(stored logprob), to three decimals.
            #expect(columns[1] == String(format: "%.3f", exp(token.logprob)), "\(line)")
            for alternative in token.alternatives {
                #expect(line.contains(String(format: "%.3f", exp(alternative.logprob))), "\(line)")
            }
        }
        #expect(lines.contains { $0.hasPrefix("      0  0.900            \"The\"") })
        #expect(lines.contains { $0.hasPrefix("      1  0.250  low,tie ") })
        #expect(lines.contains { $0.hasPrefix("      2  0.500  tie ") })

        let json = try TestEnvironment.run([
            "--workspace", file, "trace", "tokens", "1", "--span", model.spanID, "--json",
        ])
        #expect(json.status == 0, "\(json.error)")
        let parsed = try JSONValue.parse(json.output)
        let choices = try #require(parsed.array?.first?["choices"]?.array)
        #expect(parsed.array?.count == 1 && choices.count == 1)
        let printed = try #require(choices[0].array)
        #expect(printed.count == tokens.count)
        for (shown, token) in zip(printed, tokens) {
            #expect(shown["text"]?.string == token.text)
            #expect(shown["probability"]?.number == exp(token.logprob))
            #expect(shown["low_confidence"] == .bool(exp(token.logprob) < 0.3))
            let alternatives = try #require(shown["alternatives"]?.array)
            let sum = alternatives.compactMap { $0["probability"]?.number }.reduce(0, +)
            #expect(alternatives.count == token.alternatives.count && sum <= 1, "alternatives sum to \(sum)")
            let top = alternatives.compactMap { $0["probability"]?.number }.sorted(by: >)
            #expect(shown["near_tie"] == .bool(top[0] - top[1] < 0.1))
        }

        let missing = try TestEnvironment.run(["--workspace", file, "trace", "tokens", "1", "--span", "nope"])
        #expect(missing.status != 0 && missing.error.contains("trace 1 has no span nope"), "\(missing.error)")
        let none = try TestEnvironment.run(["--workspace", file, "trace", "tokens", "1", "--span", "0c5c7fd0a6a3a450"])
        #expect(none.status == 0 && none.output.contains("has no generated tokens"), "\(none.output)")
    }

    @Test func aMalformedTokenNamesItsSpanAndField() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let file = directory + "/w.sqlite"
        let trace = directory + "/bad.json"
        var value = GeneratedTokens.attributeValue([Self.generated])
        if case .array(var items) = value, case .object(var token) = items[1] {
            token["logprob"] = .number(0.7)
            items[1] = .object(token)
            value = .array(items)
        }
        try Self.otlp(tokens: value).write(toFile: trace, atomically: true, encoding: .utf8)
        #expect(try TestEnvironment.run(["--workspace", file, "trace", "import", trace]).status == 0)
        let result = try TestEnvironment.run(["--workspace", file, "trace", "tokens", "1"])
        #expect(result.status != 0)
        #expect(
            result.error.contains(
                "trace 1: span d23f0824128b2f33: loupe.llm.tokens[1].logprob: expected a log-probability"),
            "\(result.error)")
    }

    /// On a real run of SmolLM2 through `loupe agent run --provider local`: every printed
    /// probability is exp of the log-probability the workspace stored, and a position's top
    /// alternatives never hold more than all the probability. Needs the model
    /// (`scripts/fetch-smollm2`), as ``LocalAgentTests`` does.
    @Test func aLocalAgentRunsTokensReadBackAsStored() throws {
        try #require(
            FileManager.default.fileExists(atPath: LocalAgentTests.modelPath),
            "\(LocalAgentTests.modelPath) is missing: run scripts/fetch-smollm2")
        let file = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let run = try TestEnvironment.run([
            "--workspace", file, "agent", "run", "--provider", "local", "--max-steps", "1", "What is (17 + 25) * 3?",
        ])
        #expect(run.output.contains("provider local"), "\(run.output)\(run.error)")
        let workspace = try Workspace(path: file)
        let service = TraceService(tables: TraceTables(workspace))
        let model = try #require(try service.load(1).spans.first { $0.kind == "llm" }, "no model call recorded")
        let stored = try GeneratedTokens.decode(
            try service.payload(trace: 1, ordinal: model.ordinal).payload.attributes, span: model.spanID)
        let tokens = try #require(stored.first?.tokens)
        try #require(!tokens.isEmpty)

        let text = try TestEnvironment.run(["--workspace", file, "trace", "tokens", "1"])
        #expect(text.status == 0, "\(text.error)")
        let lines = text.output.split(separator: "\n").map(String.init)
        for (position, token) in tokens.enumerated() {
            let line = try #require(
                lines.first { $0.hasPrefix(String(repeating: " ", count: 7 - "\(position)".count) + "\(position)  ") })
            #expect(line.split(separator: " ")[1] == String(format: "%.3f", exp(token.logprob)), "\(line)")
        }
        let json = try JSONValue.parse(
            try TestEnvironment.run(["--workspace", file, "trace", "tokens", "1", "--json"]).output)
        let printed = try #require(json.array?.first?["choices"]?.array?.first?.array)
        #expect(printed.count == tokens.count)
        for (shown, token) in zip(printed, tokens) {
            #expect(shown["probability"]?.number == exp(token.logprob))
            let sum = (shown["alternatives"]?.array ?? []).compactMap { $0["probability"]?.number }.reduce(0, +)
            // Float log-probabilities widened: a near-certain position may sum a few ulps past 1.
            #expect(sum <= 1 + 1e-6, "alternatives of \(token.text) sum to \(sum)")
        }
    }
}
