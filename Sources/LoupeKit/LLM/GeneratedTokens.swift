import Foundation
import LoupeBase
import LoupeModels

/// The tokens a local model generated in one span, as the trace keeps them: each token's text,
/// log-probability, entropy and most likely alternatives.
///
/// Both writers (the agent's ``LocalModelProvider`` and `loupe serve`'s OpenAI endpoint) store
/// them under ``attribute`` through ``attributeValue(_:)``, and every reader decodes them with
/// ``decode(_:span:)``, so the Traces panel, `loupe trace tokens` and the MCP tool read one shape.
/// The attribute holds one sequence (an array of token objects) or, for a request that asked for
/// several choices, one such array per choice. Traces recorded before this type carry the serving
/// endpoint's own shape under ``legacyAttribute``, which the decoder still reads.
///
/// Log-probabilities are natural logarithms, the model's own (before temperature and filters, as
/// ``TokenChoice`` says); entropy is in nats.
package struct GeneratedTokens: Sendable, Equatable {
    /// The span attribute both writers use.
    package static let attribute = "loupe.llm.tokens"
    /// The serving endpoint's shape before this type: per choice, tokens as
    /// `{"id", "token", "logprob", "top_logprobs": [{"token", "logprob"}]}`, without entropy.
    package static let legacyAttribute = "loupe.response.tokens"

    /// One of the alternatives the model considered at a position.
    package struct Alternative: Sendable, Equatable {
        /// The vocabulary id; absent in the legacy shape.
        package var id: Int32?
        package var text: String
        package var logprob: Double

        package init(id: Int32?, text: String, logprob: Double) {
            self.id = id
            self.text = text
            self.logprob = logprob
        }

        /// The probability, `exp(logprob)`.
        package var probability: Double { Foundation.exp(logprob) }
    }

    /// One generated token.
    package struct Token: Sendable, Equatable {
        package var id: Int32?
        package var text: String
        package var logprob: Double
        /// The distribution's entropy in nats; absent in the legacy shape.
        package var entropy: Double?
        /// The most likely tokens at this position, most likely first (the chosen one may be
        /// among them).
        package var alternatives: [Alternative]

        package init(id: Int32?, text: String, logprob: Double, entropy: Double?, alternatives: [Alternative]) {
            self.id = id
            self.text = text
            self.logprob = logprob
            self.entropy = entropy
            self.alternatives = alternatives
        }

        /// The chosen token's probability, `exp(logprob)`.
        package var probability: Double { Foundation.exp(logprob) }
    }

    package var tokens: [Token]

    package init(tokens: [Token]) { self.tokens = tokens }

    /// A generation's tokens; `piece` gives an alternative's text from its id.
    package init(_ generated: [GeneratedToken], piece: (Int32) -> String) {
        tokens = generated.map { token in
            Token(
                id: token.id, text: token.piece, logprob: Double(token.choice.token.logprob),
                entropy: Double(token.choice.entropy),
                alternatives: token.choice.alternatives.map {
                    Alternative(id: $0.id, text: piece($0.id), logprob: Double($0.logprob))
                })
        }
    }

    /// The text the tokens spell.
    package var text: String { tokens.map(\.text).joined() }
}

// MARK: - Encoding

extension GeneratedTokens {
    /// The value to store under ``attribute``: one sequence as an array of token objects, several
    /// (one per choice) as an array of such arrays. Log-probabilities are kept unrounded, so a
    /// reader sees exactly what the sampler reported.
    package static func attributeValue(_ sequences: [GeneratedTokens]) -> JSONValue {
        if sequences.count == 1 { return sequences[0].json }
        return .array(sequences.map(\.json))
    }

    /// The sequence as an array of token objects.
    package var json: JSONValue {
        .array(
            tokens.map { token in
                var members: [(String, JSONValue)] = []
                if let id = token.id { members.append(("id", .number(Double(id)))) }
                members.append(("text", .string(token.text)))
                members.append(("logprob", .number(token.logprob)))
                if let entropy = token.entropy { members.append(("entropy", .number(entropy))) }
                members.append(
                    (
                        "top",
                        .array(
                            token.alternatives.map { alternative in
                                var top: [(String, JSONValue)] = []
                                if let id = alternative.id { top.append(("id", .number(Double(id)))) }
                                top.append(("text", .string(alternative.text)))
                                top.append(("logprob", .number(alternative.logprob)))
                                return .object(JSONObject(top))
                            })
                    ))
                return .object(JSONObject(members))
            })
    }
}

// MARK: - Decoding

/// A span's generated tokens that cannot be read: which span, which field, what is wrong.
package struct GeneratedTokensError: UserFacingError, Hashable, Sendable {
    /// The span's id or name, as the reader knows it.
    package var span: String
    /// The field at fault as a path from the span's attributes (`loupe.llm.tokens[3].top[1].logprob`).
    package var field: String
    package var message: String

    package init(span: String, field: String, _ message: String) {
        self.span = span
        self.field = field
        self.message = message
    }

    package var description: String { "span \(span): \(field): \(message)" }
}

extension GeneratedTokens {
    /// How far above zero a log-probability (or below zero an entropy) may be: the sampler
    /// subtracts a float log-sum-exp, so a certain token can come out a few ulps positive. The
    /// value is kept as written, so a reader sees what the sampler reported.
    static let tolerance = 1e-3

    /// The generated tokens among a span's attributes, one sequence per choice; empty when the
    /// span has none (it is not a local model's step).
    ///
    /// - Throws: ``GeneratedTokensError`` naming the span and the field when the attribute is
    ///   there but malformed (trace files are untrusted: an imported span may carry anything).
    package static func decode(_ attributes: JSONObject, span: String) throws(GeneratedTokensError)
        -> [GeneratedTokens]
    {
        try decode({ attributes[$0] }, span: span)
    }

    /// ``decode(_:span:)`` for attributes as a dictionary (what the agent provider builds).
    package static func decode(_ attributes: [String: JSONValue], span: String) throws(GeneratedTokensError)
        -> [GeneratedTokens]
    {
        try decode({ attributes[$0] }, span: span)
    }

    private static func decode(_ lookup: (String) -> JSONValue?, span: String) throws(GeneratedTokensError)
        -> [GeneratedTokens]
    {
        let reader = Reader(span: span)
        if let value = lookup(attribute), !value.isNull {
            return try reader.sequences(value, field: attribute, legacy: false)
        }
        if let value = lookup(legacyAttribute), !value.isNull {
            return try reader.sequences(value, field: legacyAttribute, legacy: true)
        }
        return []
    }
}

/// Walks one attribute's value, naming each field it rejects.
private struct Reader {
    let span: String

    func fail(_ field: String, _ message: String) -> GeneratedTokensError {
        GeneratedTokensError(span: span, field: field, message)
    }

    func found(_ value: JSONValue) -> String {
        let json = value.compactJSON
        return json.count > 40 ? String(json.prefix(40)) + "…" : json
    }

    /// One sequence (an array of objects) or several (an array of arrays); the legacy shape is
    /// always one array per choice.
    func sequences(_ value: JSONValue, field: String, legacy: Bool) throws(GeneratedTokensError)
        -> [GeneratedTokens]
    {
        guard let items = value.array else {
            throw fail(field, "expected an array of tokens, found \(found(value))")
        }
        let nested = legacy || items.first?.array != nil
        if !nested { return [try sequence(items, field: field, legacy: legacy)] }
        var result: [GeneratedTokens] = []
        for (index, item) in items.enumerated() {
            guard let tokens = item.array else {
                throw fail("\(field)[\(index)]", "expected an array of tokens (one choice), found \(found(item))")
            }
            result.append(try sequence(tokens, field: "\(field)[\(index)]", legacy: legacy))
        }
        return result
    }

    func sequence(_ items: [JSONValue], field: String, legacy: Bool) throws(GeneratedTokensError)
        -> GeneratedTokens
    {
        var tokens: [GeneratedTokens.Token] = []
        tokens.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            tokens.append(try token(item, field: "\(field)[\(index)]", legacy: legacy))
        }
        return GeneratedTokens(tokens: tokens)
    }

    func token(_ value: JSONValue, field: String, legacy: Bool) throws(GeneratedTokensError)
        -> GeneratedTokens.Token
    {
        guard let object = value.object else { throw fail(field, "expected a token object, found \(found(value))") }
        let textKey = legacy ? "token" : "text"
        let topKey = legacy ? "top_logprobs" : "top"
        let id = try self.id(object["id"], field: "\(field).id")
        let text = try string(object[textKey], field: "\(field).\(textKey)")
        let logprob = try self.logprob(object["logprob"], field: "\(field).logprob")
        var entropy: Double?
        if let value = object["entropy"], !value.isNull {
            guard let number = value.number, number.isFinite, number >= -GeneratedTokens.tolerance else {
                throw fail("\(field).entropy", "expected an entropy in nats (a number ≥ 0), found \(found(value))")
            }
            entropy = number
        }
        var alternatives: [GeneratedTokens.Alternative] = []
        if let top = object[topKey], !top.isNull {
            guard let items = top.array else {
                throw fail("\(field).\(topKey)", "expected an array of alternatives, found \(found(top))")
            }
            for (index, item) in items.enumerated() {
                let at = "\(field).\(topKey)[\(index)]"
                guard let alternative = item.object else {
                    throw fail(at, "expected an alternative object, found \(found(item))")
                }
                alternatives.append(
                    GeneratedTokens.Alternative(
                        id: try self.id(alternative["id"], field: "\(at).id"),
                        text: try string(alternative[textKey], field: "\(at).\(textKey)"),
                        logprob: try self.logprob(alternative["logprob"], field: "\(at).logprob")))
            }
        }
        return GeneratedTokens.Token(id: id, text: text, logprob: logprob, entropy: entropy, alternatives: alternatives)
    }

    /// An id is optional: the legacy shape has none for alternatives.
    func id(_ value: JSONValue?, field: String) throws(GeneratedTokensError) -> Int32? {
        guard let value, !value.isNull else { return nil }
        guard let int = value.int, let id = Int32(exactly: int), id >= 0 else {
            throw fail(field, "expected a vocabulary id (an integer ≥ 0), found \(found(value))")
        }
        return id
    }

    func string(_ value: JSONValue?, field: String) throws(GeneratedTokensError) -> String {
        guard let value else { throw fail(field, "missing (the token's text)") }
        guard let string = value.string else { throw fail(field, "expected a string, found \(found(value))") }
        return string
    }

    func logprob(_ value: JSONValue?, field: String) throws(GeneratedTokensError) -> Double {
        guard let value else { throw fail(field, "missing (a log-probability)") }
        guard case .number(let number) = value, number.isFinite, number <= GeneratedTokens.tolerance else {
            throw fail(field, "expected a log-probability (a number ≤ 0), found \(found(value))")
        }
        return number
    }
}
