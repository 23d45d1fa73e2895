import Foundation
import LoupeBase
import LoupeKit
import Testing

/// The generated-token record both trace writers share: what they store is what readers get back,
/// the serving endpoint's older shape still reads, and a malformed span names the field at fault.
@Suite struct GeneratedTokensTests {
    /// Two tokens as a sampler reports them: Float log-probabilities widened to Double.
    static let sample = GeneratedTokens(tokens: [
        .init(
            id: 504, text: "The", logprob: Double(Float(-0.1053)), entropy: Double(Float(0.4121)),
            alternatives: [
                .init(id: 504, text: "The", logprob: Double(Float(-0.1053))),
                .init(id: 339, text: "A", logprob: Double(Float(-2.4017))),
            ]),
        .init(
            id: 1_210, text: " answer\u{1b}[2J", logprob: Double(Float(-1.3862)), entropy: Double(Float(1.91)),
            alternatives: [
                .init(id: 3_001, text: " result", logprob: Double(Float(-0.9163))),
                .init(id: 1_210, text: " answer\u{1b}[2J", logprob: Double(Float(-1.3862))),
            ]),
    ])

    @Test func whatTheWritersStoreReadsBackExactly() throws {
        let value = GeneratedTokens.attributeValue([Self.sample])
        // One sequence is a flat array of token objects, in the provider's established shape.
        #expect(value.array?.first?["top"]?.array?.count == 2)
        #expect(value.array?.first?["text"] == .string("The"))
        // Through the stored form: the attributes column is JSON text.
        let stored = try JSONValue.parse(JSONValue.object([GeneratedTokens.attribute: value]).compactJSON)
        let decoded = try GeneratedTokens.decode(try #require(stored.object), span: "s1")
        #expect(decoded == [Self.sample])
        // The chosen token's probability is the sampler's, not a rounded copy.
        #expect(decoded[0].tokens[1].probability == exp(Double(Float(-1.3862))))
        #expect(decoded[0].text == "The answer\u{1b}[2J")
    }

    @Test func severalChoicesAreOneSequenceEach() throws {
        var second = Self.sample
        second.tokens.removeLast()
        let value = GeneratedTokens.attributeValue([Self.sample, second])
        #expect(value.array?.first?.array != nil)
        let decoded = try GeneratedTokens.decode([GeneratedTokens.attribute: value], span: "s1")
        #expect(decoded == [Self.sample, second])
    }

    @Test func aSpanWithoutTokensHasNone() throws {
        #expect(try GeneratedTokens.decode(["gen_ai.request.model": "gpt-4o"], span: "s1").isEmpty)
    }

    @Test func theServingEndpointsOlderShapeStillReads() throws {
        let legacy = try JSONValue.parse(
            """
            {"loupe.response.tokens": [[
              {"id": 504, "token": "The", "logprob": -0.5,
               "top_logprobs": [{"token": "The", "logprob": -0.5}, {"token": "A", "logprob": -1.25}]},
              {"id": 30, "token": ".", "logprob": 0}
            ]]}
            """)
        let decoded = try GeneratedTokens.decode(try #require(legacy.object), span: "s9")
        #expect(
            decoded == [
                GeneratedTokens(tokens: [
                    .init(
                        id: 504, text: "The", logprob: -0.5, entropy: nil,
                        alternatives: [
                            .init(id: nil, text: "The", logprob: -0.5), .init(id: nil, text: "A", logprob: -1.25),
                        ]),
                    .init(id: 30, text: ".", logprob: 0, entropy: nil, alternatives: []),
                ])
            ])
    }

    @Test(arguments: [
        (
            #"{"loupe.llm.tokens": {"text": "a"}}"#,
            #"span s2: loupe.llm.tokens: expected an array of tokens, found {"text":"a"}"#
        ),
        (
            #"{"loupe.llm.tokens": [{"text": "a", "logprob": -1, "top": [{"text": "b", "logprob": 0.7}]}]}"#,
            "span s2: loupe.llm.tokens[0].top[0].logprob: expected a log-probability (a number ≤ 0), found 0.7"
        ),
        (
            #"{"loupe.llm.tokens": [{"text": "a", "logprob": -1}, {"id": -4, "text": "b", "logprob": -1}]}"#,
            "span s2: loupe.llm.tokens[1].id: expected a vocabulary id (an integer ≥ 0), found -4"
        ),
        (
            #"{"loupe.llm.tokens": [{"logprob": -1}]}"#,
            "span s2: loupe.llm.tokens[0].text: missing (the token's text)"
        ),
        (
            #"{"loupe.llm.tokens": [{"text": "a", "logprob": "-1"}]}"#,
            #"span s2: loupe.llm.tokens[0].logprob: expected a log-probability (a number ≤ 0), found "-1""#
        ),
        (
            #"{"loupe.response.tokens": [{"token": "a", "logprob": -1}]}"#,
            #"span s2: loupe.response.tokens[0]: expected an array of tokens (one choice), found {"logprob":-1,"#
                + #""token":"a"}"#
        ),
        (
            #"{"loupe.llm.tokens": [{"text": "a", "logprob": -1, "entropy": -2}]}"#,
            "span s2: loupe.llm.tokens[0].entropy: expected an entropy in nats (a number ≥ 0), found -2"
        ),
    ])
    func aMalformedSpanNamesTheField(json: String, message: String) throws {
        let attributes = try #require(try JSONValue.parse(json).object)
        #expect {
            try GeneratedTokens.decode(attributes, span: "s2")
        } throws: { error in
            (error as? GeneratedTokensError)?.description == message
        }
    }
}
