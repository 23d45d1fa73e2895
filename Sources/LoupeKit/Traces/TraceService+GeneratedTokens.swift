import LoupeAgents
import LoupeBase
import LoupeStore

extension TraceService {
    /// One span of a trace with the tokens a local model generated in it, one sequence per choice.
    package struct TokenSpan: Equatable, Sendable {
        package var row: SpanRow
        package var sequences: [GeneratedTokens]

        package init(row: SpanRow, sequences: [GeneratedTokens]) {
            self.row = row
            self.sequences = sequences
        }

        /// The span as `loupe trace tokens --json` prints it and the MCP `trace_tokens` tool returns
        /// it: `{"span", "ordinal", "name", "choices": [[token…]…]}`, each token with its id, text,
        /// log-probability, probability, entropy (nats), low-confidence and near-tie marks and its
        /// alternatives (see ``tokenJSON(_:)``).
        package var json: JSONValue { json(choices: sequences.map { $0.tokens[...] }) }

        /// ``json`` with each choice's tokens replaced by `choices` (a window of them).
        package func json(choices: [ArraySlice<GeneratedTokens.Token>]) -> JSONValue {
            .object([
                "span": .string(row.spanID), "ordinal": .number(Double(row.ordinal)), "name": .string(row.name),
                "choices": .array(choices.map { .array($0.map(Self.tokenJSON)) }),
            ])
        }

        /// One token: probabilities are `exp(logprob)`; the marks are
        /// ``GeneratedTokens/Token/isLowConfidence`` and ``GeneratedTokens/Token/isNearTie``.
        package static func tokenJSON(_ token: GeneratedTokens.Token) -> JSONValue {
            .object([
                "id": token.id.map { .number(Double($0)) } ?? .null,
                "text": .string(token.text), "logprob": .number(token.logprob),
                "probability": .number(token.probability),
                "entropy": token.entropy.map { .number($0) } ?? .null,
                "low_confidence": .bool(token.isLowConfidence), "near_tie": .bool(token.isNearTie),
                "alternatives": .array(
                    token.alternatives.map { alternative in
                        .object([
                            "id": alternative.id.map { .number(Double($0)) } ?? .null,
                            "text": .string(alternative.text),
                            "logprob": .number(alternative.logprob),
                            "probability": .number(alternative.probability),
                        ])
                    }),
            ])
        }
    }

    /// Why a trace's generated tokens could not be read: the span asked for is not in the trace,
    /// or a span's token attribute is malformed (trace files are untrusted). The description is
    /// sanitized: it may quote the span id a user typed and the attribute's content.
    package struct TokensError: UserFacingError, Hashable, Sendable {
        package var description: String

        package init(_ description: String) { self.description = UntrustedText.sanitized(description) }
    }

    /// The spans of trace `id` that carry generated tokens (``GeneratedTokens/attribute`` or the
    /// serving endpoint's older attribute), in span order; with `span` (a span id or an ordinal, as
    /// `loupe trace show --json` lists them), that span only, and an empty answer when it carries none.
    ///
    /// `loupe trace tokens` and the MCP `trace_tokens` tool both read tokens through here, so the
    /// shell and an agent see the same spans and the same numbers.
    ///
    /// - Throws: ``TraceImportError`` when there is no such trace; ``TokensError`` when `span` is not
    ///   one of its spans or a span's tokens are malformed (naming the span and the field).
    package func generatedTokens(trace id: Int64, span: String? = nil) throws -> [TokenSpan] {
        var rows = try load(id).spans
        if let span {
            rows = rows.filter { $0.spanID == span || String($0.ordinal) == span }
            guard !rows.isEmpty else {
                throw TokensError("trace \(id) has no span \(span) (loupe trace show \(id) --json lists them)")
            }
        }
        var found: [TokenSpan] = []
        for row in rows {
            let payload = try payload(trace: id, ordinal: row.ordinal).payload
            let sequences: [GeneratedTokens]
            do {
                sequences = try GeneratedTokens.decode(payload.attributes, span: row.spanID)
            } catch {
                throw TokensError("trace \(id): \(error.description)")
            }
            if !sequences.isEmpty { found.append(TokenSpan(row: row, sequences: sequences)) }
        }
        return found
    }
}
