import Foundation
import LoupeBase

/// Every token's bytes and kind, for checking tokens against a grammar. Build it once per
/// tokenizer (49,152 small arrays for SmolLM2) and share it: it is immutable.
package final class TokenTable: Sendable {
    /// Each token's bytes; a CONTROL token's are its spelling (`<|im_end|>`).
    let bytes: [[UInt8]]
    let isControl: [Bool]
    let endOfGeneration: Set<Int32>

    package init(_ tokenizer: BPETokenizer) {
        bytes = (0..<tokenizer.count).map { tokenizer.decodeBytes([Int32($0)], renderSpecial: true) }
        isControl = (0..<tokenizer.count).map { tokenizer.isControl(Int32($0)) }
        endOfGeneration = tokenizer.endOfGenerationIDs
    }

    package var count: Int { bytes.count }
}

/// A grammar over a tokenizer's tokens: what ``GenerationOptions/constraint`` holds to make a
/// generation stay in the grammar.
package struct GrammarConstraint: Sendable, Equatable {
    package let grammar: Grammar
    package let tokens: TokenTable
    /// Tokens every matcher has read when it starts (``after(_:)``); empty: the grammar's start.
    package private(set) var prefix: [Int32] = []

    package init(_ grammar: Grammar, tokens: TokenTable) {
        self.grammar = grammar
        self.tokens = tokens
    }

    package static func == (a: GrammarConstraint, b: GrammarConstraint) -> Bool {
        a.grammar == b.grammar && a.tokens === b.tokens && a.prefix == b.prefix
    }

    /// A matcher at the grammar's start, past ``prefix``.
    package func start() -> TokenMatcher {
        var matcher = TokenMatcher(matcher: GrammarMatcher(grammar), tokens: tokens)
        for id in prefix { matcher.accept(id) }
        return matcher
    }

    /// The constraint for what follows `ids` (an answer whose first tokens were given, as a token
    /// fork gives them), or nil when the grammar refuses one of them: the index of the first
    /// refused is then `refused(ids)`.
    package func after(_ ids: [Int32]) -> GrammarConstraint? {
        guard refused(ids) == nil else { return nil }
        var advanced = self
        advanced.prefix += ids
        return advanced
    }

    /// The index in `ids` of the first token the grammar refuses after ``prefix``; nil when it
    /// accepts them all.
    package func refused(_ ids: [Int32]) -> Int? {
        var matcher = start()
        for (index, id) in ids.enumerated() {
            guard matcher.allows(id) else { return index }
            matcher.accept(id)
        }
        return nil
    }
}

/// A ``GrammarMatcher`` that reads tokens: an end-of-generation token is allowed only where the
/// grammar may end, another CONTROL token only in free text, and any other token when its bytes
/// may come next.
package struct TokenMatcher: Sendable {
    package private(set) var matcher: GrammarMatcher
    let tokens: TokenTable

    /// Whether `id` may come next. Leaves the matcher as it was.
    package func allows(_ id: Int32) -> Bool {
        guard id >= 0, Int(id) < tokens.count else { return false }
        if tokens.endOfGeneration.contains(id) { return matcher.canEnd }
        if matcher.isFreeText { return true }
        let bytes = tokens.bytes[Int(id)]
        guard !tokens.isControl[Int(id)], !bytes.isEmpty else { return false }
        return matcher.accepts(bytes)
    }

    /// `allows(_:)` for one step's many questions: after a few tokens it learns which first
    /// bytes the grammar takes here (256 checks), and refuses the rest of the vocabulary by
    /// their first byte alone. Valid until the next `accept(_:)`.
    package func stepChecker() -> (Int32) -> Bool {
        var asked = 0
        var firstBytes: [Bool]?
        return { [self] id in
            guard id >= 0, Int(id) < tokens.count else { return false }
            if tokens.endOfGeneration.contains(id) { return matcher.canEnd }
            if matcher.isFreeText { return true }
            let bytes = tokens.bytes[Int(id)]
            guard !tokens.isControl[Int(id)], let first = bytes.first else { return false }
            asked += 1
            if firstBytes == nil && asked > 8 {
                firstBytes = (0..<256).map { matcher.accepts(CollectionOfOne(UInt8($0))) }
            }
            if let firstBytes {
                guard firstBytes[Int(first)] else { return false }
                if bytes.count == 1 { return true }
            }
            return matcher.accepts(bytes)
        }
    }

    /// Moves past `id`, which `allows(_:)` accepted (an end-of-generation token changes nothing).
    package mutating func accept(_ id: Int32) {
        guard !tokens.endOfGeneration.contains(id), !matcher.isFreeText else { return }
        let consumed = matcher.consume(tokens.bytes[Int(id)])
        precondition(consumed, "token \(id) accepted by the grammar, then refused")
    }
}
