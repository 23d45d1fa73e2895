import Foundation
import LoupeBase
import LoupeKit
import LoupeStore

extension WorkspaceTools {
    static let traceTokensTool = ToolDefinition(
        name: "trace_tokens", title: "A local model's generated tokens",
        description: "What a local model (`loupe agent run --provider local`, `loupe serve`) generated in a trace,"
            + " token by token: each token's probability (exp of the model's log-probability), entropy and most"
            + " likely alternatives, marked `low_confidence` (p < \(GeneratedTokens.Token.lowConfidence)) and"
            + " `near_tie` (the two most likely alternatives less than \(GeneratedTokens.Token.nearTie) apart):"
            + " the places the model could easily have gone another way. Each span is what `loupe trace tokens"
            + " --json` prints. Tokens come a page at a time across the spans; a result that leaves tokens out"
            + " says so in `more` with the cursor to ask for next." + ToolDefinition.untrustedNote,
        properties: [
            "id": ToolDefinition.property("integer", "The trace's id (traces_list)."),
            "span": ToolDefinition.property(
                "string", "Only this span: its id or its ordinal (trace_show's `span`)."),
            "limit": ToolDefinition.property(
                "integer", "Tokens per page (1-2000, default 200).", ["minimum": .number(1), "maximum": .number(2000)]),
            "cursor": ToolDefinition.property("string", "next_cursor from the previous page."),
        ],
        required: ["id"])

    func traceTokens(_ arguments: ToolArguments) throws -> ToolResult {
        let id = try arguments.integer("id")
        let span = try arguments.string("span")
        let limit = Int(try arguments.integer("limit", default: 200, in: 1...2000))
        let offset = try arguments.cursor()
        let found = try traces.generatedTokens(trace: id, span: span)
        let total = found.reduce(0) { $0 + $1.sequences.reduce(0) { $0 + $1.tokens.count } }
        guard total > 0 else {
            let which = span.map { "span \(UntrustedFence.inline($0, limit: 40)) of trace \(id)" } ?? "trace \(id)"
            return ToolResult(
                structured: .object([
                    "trace": .number(Double(id)), "total_tokens": .number(0), "from_token": .number(0),
                    "shown_tokens": .number(0), "spans": .array([]), "next_cursor": .null,
                ]),
                text: "\(which) has no generated tokens (only a local model's steps record them)")
        }

        // The page: tokens `offset…` in span, choice, position order, up to `limit` and the budget.
        var budget = Self.resultCharacterBudget
        var position = 0
        var shown = 0
        var next: Int?
        var spans: [JSONValue] = []
        var rendered: [String] = []
        page: for item in found {
            var windows: [ArraySlice<GeneratedTokens.Token>] = []
            var lines: [String] = []
            for (choice, sequence) in item.sequences.enumerated() {
                let start = min(max(offset - position, 0), sequence.tokens.count)
                var end = start
                while end < sequence.tokens.count, next == nil {
                    if shown == limit || budget <= 0 {
                        next = position + end
                        break
                    }
                    budget -= Self.charactersOf(sequence.tokens[end])
                    shown += 1
                    end += 1
                }
                windows.append(sequence.tokens[start..<end])
                if start < end {
                    lines.append(
                        "span \(item.row.ordinal) \(UntrustedFence.inline(item.row.name, limit: 60))"
                            + (item.sequences.count > 1 ? ", choice \(choice + 1) of \(item.sequences.count)" : "")
                            + ": tokens \(start)-\(end - 1) of \(sequence.tokens.count)")
                    lines += (start..<end).map { Self.tokenLine(sequence.tokens[$0], position: $0) }
                }
                position += sequence.tokens.count
            }
            if windows.contains(where: { !$0.isEmpty }) {
                var json = item.json(choices: windows)
                if windows.map(\.count) != item.sequences.map(\.tokens.count), case .object(var members) = json {
                    // A part of the span: where each choice's shown tokens start, and how many it has.
                    members["window"] = .object([
                        "from": .array(windows.map { .number(Double($0.startIndex)) }),
                        "of": .array(item.sequences.map { .number(Double($0.tokens.count)) }),
                    ])
                    json = .object(members)
                }
                spans.append(json)
                rendered += lines
            }
            if next != nil { break page }
        }

        let sequences = found.flatMap(\.sequences)
        let low = sequences.reduce(0) { $0 + $1.tokens.filter(\.isLowConfidence).count }
        let ties = sequences.reduce(0) { $0 + $1.tokens.filter(\.isNearTie).count }
        var result: JSONObject = [
            "trace": .number(Double(id)), "total_tokens": .number(Double(total)),
            "low_confidence": .number(Double(low)), "near_ties": .number(Double(ties)),
            "from_token": .number(Double(offset)), "shown_tokens": .number(Double(shown)), "spans": .array(spans),
            "next_cursor": next.map { .string(ToolArguments.cursor(at: $0)) } ?? .null,
        ]
        var header =
            "trace \(id): \(Self.count(found.count, "span")) with generated tokens, "
            + "\(Self.count(total, "token")) (\(low) low-confidence, \(Self.count(ties, "near-tie")))"
        if shown > 0 { header += "; tokens \(offset)-\(offset + shown - 1) below" }
        var body = rendered.isEmpty ? "" : "\n" + UntrustedFence.fenced(rendered.joined(separator: "\n"))
        if let next {
            let cursor = ToolArguments.cursor(at: next)
            result["more"] = .object([
                "cursor": .string(cursor),
                "hint": .string("\(total - next) more tokens: call trace_tokens again with cursor \"\(cursor)\""),
            ])
            body += "\nmore: \(total - next) tokens; call again with cursor \"\(cursor)\""
        }
        return ToolResult(structured: .object(result), text: header + body)
    }

    /// "1 token", "3 tokens".
    private static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)" + (number == 1 ? "" : "s")
    }

    /// Characters a token takes in the structured result: what the budget counts.
    private static func charactersOf(_ token: GeneratedTokens.Token) -> Int {
        TraceService.TokenSpan.tokenJSON(token).compactJSON.count
    }

    /// `position  p  mark  "text"  "alternative" p …`, the text made one visible line.
    private static func tokenLine(_ token: GeneratedTokens.Token, position: Int) -> String {
        let mark = [token.isLowConfidence ? "low" : "", token.isNearTie ? "tie" : ""].filter { !$0.isEmpty }
            .joined(separator: ",")
        func quoted(_ text: String) -> String { "\"" + UntrustedFence.inline(text, limit: 40) + "\"" }
        let alternatives = token.alternatives.map { quoted($0.text) + String(format: " %.3f", $0.probability) }
        return String(format: "%6d  %.3f  ", position, token.probability)
            + mark.padding(toLength: 7, withPad: " ", startingAt: 0) + "  " + quoted(token.text) + "  "
            + alternatives.joined(separator: "  ")
    }
}
