import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeStore

/// `--trace ID --span N --token I`: a generated token of a local model's step, instead of a
/// text: `loupe attention --model smollm2` and `loupe lens` then read the step's own context (its
/// recorded prompt and the tokens before that one) at the position that chose the token, as `a`
/// and `l` do in the Traces panel's token view.
struct TokenSelector: ParsableArguments {
    @Option(help: ArgumentHelp("A trace with a local model's step (instead of a text).", valueName: "id"))
    var trace: Int64?
    @Option(
        help: ArgumentHelp("With --trace: the step's span ordinal (loupe trace tokens lists them).", valueName: "n"))
    var span: Int?
    @Option(help: ArgumentHelp("With --trace: the generated token's index, from 0.", valueName: "index"))
    var token: Int?

    /// Whether a token was chosen (all three selectors given).
    var isGiven: Bool { trace != nil }

    /// Exactly one of a text and the three selectors.
    func validate(text: String?) throws {
        let given = [trace != nil, span != nil, token != nil].filter { $0 }.count
        if given > 0, given < 3 { throw ValidationError("--trace, --span and --token go together: give all three") }
        if given == 3, text != nil { throw ValidationError("give a text or --trace/--span/--token, not both") }
        if given == 0, text == nil { throw ValidationError("give a text, or --trace ID --span N --token I") }
    }

    /// The workspace's token browser: its traces, and SmolLM2 from the session's models.
    func browser(in context: CommandContext) throws -> TokenInsidesBrowser {
        TokenInsidesBrowser(tables: try context.traceTables(access: .read), models: context.session.models)
    }

    /// How a heading names the token: trace, span, index and text, and where it was chosen.
    static func heading(_ context: TokenContext) -> String {
        "trace \(context.trace) span \(context.span) token #\(context.token) "
            + UntrustedText.sanitized(context.chosen.text).debugDescription
            + String(format: " (p %.3f recorded)", context.chosen.probability)
            + ", chosen at position \(context.query) of \(context.ids.count)"
    }
}

extension AttentionCommand {
    struct TokenRecord: Encodable {
        var model: String
        var trace: Int64
        var span: Int
        var token: Int
        var chosen: String
        /// The position that predicted the token: the last of the context.
        var query: Int
        var promptTokens: Int
        var tokens: [String]
        /// The key/value head each query head reads (grouped-query attention).
        var keyValueHeads: [Int]
        /// `[layer][head][key]`: the query's row in every head.
        var attention: [[[Float]]]
    }

    /// `--model smollm2 --trace --span --token`: every head's row at the position that chose the
    /// token; as text, `--layer`'s heads with what each attends to most (`--head`: one head's ten).
    func runToken(in context: CommandContext) throws {
        if model != .smollm2 {
            throw CommandFailure("--trace/--span/--token read the local model: add --model smollm2")
        }
        if pair != nil || combine != nil || scores {
            throw CommandFailure("--pair, --combine and --scores are for MiniLM; leave them out with --model smollm2")
        }
        let attention = try selector.browser(in: context).attention(
            trace: selector.trace ?? 0, span: selector.span ?? 0, token: selector.token ?? 0)
        guard (0..<attention.layers).contains(layer) else {
            throw CommandFailure("--layer \(layer) is out of range: SmolLM2 has layers 0…\(attention.layers - 1)")
        }
        if let head, !(0..<attention.heads).contains(head) {
            throw CommandFailure("--head \(head) is out of range: SmolLM2 has heads 0…\(attention.heads - 1)")
        }
        let token = attention.context
        if json {
            return context.print(
                try Formatting.json(
                    TokenRecord(
                        model: ModelLibrary.smolLM2Name, trace: token.trace, span: token.span, token: token.token,
                        chosen: token.chosen.text, query: token.query, promptTokens: token.promptCount,
                        tokens: attention.tokens, keyValueHeads: attention.keyValueHeads,
                        attention: (0..<attention.layers).map { l in
                            (0..<attention.heads).map { Array(attention.row(layer: l, head: $0)) }
                        })))
        }
        func key(_ position: Int, _ probability: Float) -> String {
            "\(position) " + String(UntrustedText.sanitized(attention.tokens[position]).debugDescription.prefix(14))
                + String(format: " %.3f", probability)
        }
        context.print("SmolLM2 attention at " + TokenSelector.heading(token) + "; layer \(layer), float path")
        if let head {
            context.print(
                "head \(head) (reads KV head \(attention.keyValueHeads[head])): "
                    + String(format: "entropy %.2f bits", attention.entropy(layer: layer, head: head))
                    + "; attends to")
            for entry in attention.top(layer: layer, head: head, limit: 10) {
                context.print("  " + key(entry.key, entry.probability))
            }
            return
        }
        context.print("head  kv  entropy  attends to most")
        for h in 0..<attention.heads {
            let top = attention.top(layer: layer, head: h, limit: 3).map { key($0.key, $0.probability) }
            context.print(
                String(
                    format: "%4d  %2d  %7.2f  ", h, attention.keyValueHeads[h], attention.entropy(layer: layer, head: h)
                )
                    + top.joined(separator: " · "))
        }
    }
}

extension LensCommand {
    struct TokenRecord: Encodable {
        var model: String
        var precision: String
        var trace: Int64
        var span: Int
        var token: Int
        var chosen: GenerationRecord.Alternative?
        /// The probability the step recorded for the token when it generated it.
        var recordedLogprob: Double
        var position: Int
        var layers: [Layer]

        struct Layer: Encodable {
            var layer: Int
            var top: [GenerationRecord.Alternative]
            /// The chosen token at this layer.
            var chosen: GenerationRecord.Alternative?
        }
    }

    /// `--trace --span --token`: the lens at the position that chose the token, each layer's
    /// top tokens and its probability of the one chosen.
    func runToken(in context: CommandContext) throws {
        if !position.isEmpty || attribute != nil {
            throw CommandFailure("--position and --attribute read a text; with --token the position is the token's")
        }
        let lens = try selector.browser(in: context).lens(
            trace: selector.trace ?? 0, span: selector.span ?? 0, token: selector.token ?? 0, top: top,
            precision: precision)
        func alternative(_ entry: TokenLens.Prediction) -> GenerationRecord.Alternative {
            .init(id: entry.id, text: entry.text, logprob: Float(entry.logprob))
        }
        let token = lens.context
        if json {
            return context.print(
                try Formatting.json(
                    TokenRecord(
                        model: ModelLibrary.smolLM2Name, precision: precision.rawValue, trace: token.trace,
                        span: token.span, token: token.token, chosen: lens.layers.last?.chosen.map(alternative),
                        recordedLogprob: token.chosen.logprob, position: token.query,
                        layers: lens.layers.map {
                            .init(layer: $0.layer, top: $0.top.map(alternative), chosen: $0.chosen.map(alternative))
                        })))
        }
        func shown(_ text: String) -> String { String(UntrustedText.sanitized(text).debugDescription.prefix(14)) }
        context.print("logit lens at " + TokenSelector.heading(token) + "; \(precision.rawValue)")
        context.print("layer  top token              p      chosen p")
        for layer in lens.layers {
            let first = layer.top[0]
            context.print(
                String(format: "%5d  ", layer.layer) + shown(first.text).padded(to: 20)
                    + String(format: " %.3f  ", first.probability)
                    + (layer.chosen.map { String(format: "%.3f", $0.probability) } ?? "—"))
        }
    }
}
