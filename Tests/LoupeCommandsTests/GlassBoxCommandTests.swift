import Foundation
import Testing

/// `loupe lens`, `loupe heads` and `loupe attention --model smollm2` on the real SmolLM2-135M-Instruct,
/// run as the real binary: their JSON agrees with `loupe logits` and with itself (rows of
/// probabilities, attributions that add up).
@Suite(.serialized) struct GlassBoxCommandTests {
    static let text = "The capital of France is Paris. The capital of Germany is"

    /// The lens's last row is the model's own prediction: the same top tokens and log-probabilities
    /// `loupe logits` gives at that position.
    @Test func theLensLastRowIsWhatLogitsSays() throws {
        let lens = try GenerateCommandTests.run([
            "lens", Self.text, "--position", "11", "--position", "4", "--top", "3", "--json",
        ])
        #expect(lens.status == 0, "\(lens.error)")
        let cells = try #require(try GenerateCommandTests.object(lens.output)["cells"] as? [[String: Any]])
        #expect(cells.count == 2 * 31)
        let logits = try GenerateCommandTests.run(["logits", Self.text, "--precision", "f32", "--top", "3", "--json"])
        #expect(logits.status == 0, "\(logits.error)")
        let positions = try #require(try GenerateCommandTests.object(logits.output)["positions"] as? [[String: Any]])
        for (index, position) in [11, 4].enumerated() {
            let last = cells[index * 31 + 30]
            #expect(last["layer"] as? Int == 30 && last["position"] as? Int == position)
            let mine = try #require(last["top"] as? [[String: Any]])
            let theirs = try #require(positions[position]["top"] as? [[String: Any]])
            #expect(mine.compactMap { $0["id"] as? Int } == theirs.compactMap { $0["id"] as? Int })
            for (a, b) in zip(mine, theirs) {
                #expect(abs((a["logprob"] as? Double ?? 0) - (b["logprob"] as? Double ?? 1)) < 1e-4)
            }
        }
        #expect((cells[30]["top"] as? [[String: Any]])?.first?["text"] as? String == " Berlin")
    }

    /// The attribution's parts add up to the logit difference, and a token that is not one token is
    /// refused with a message that says so.
    @Test func attributionAddsUpAndBadTokensAreRefused() throws {
        let result = try GenerateCommandTests.run([
            "lens", Self.text, "--attribute", " Berlin", "--versus", " Paris", "--position", "11", "--json",
        ])
        #expect(result.status == 0, "\(result.error)")
        let json = try GenerateCommandTests.object(result.output)
        let attribution = try #require(json["attribution"] as? [String: Any])
        let logit = try #require(attribution["logit"] as? Double)
        let total = try #require(json["total"] as? Double)
        #expect(abs(logit - total) < 1e-3 && logit > 1, "logit \(logit), parts \(total)")
        let heads = try #require(attribution["heads"] as? [[Double]])
        #expect(heads.count == 30 && heads.allSatisfy { $0.count == 9 })
        let refused = try GenerateCommandTests.run([
            "lens", Self.text, "--attribute", " Berlin and", "--position", "11",
        ])
        #expect(refused.status != 0 && refused.error.contains("is 2 tokens, not one"), "\(refused.error)")
    }

    /// Each query head's rows are causal probability distributions, and the JSON names the key/value
    /// head each reads.
    @Test func smolLM2AttentionIsCausalAndGrouped() throws {
        let result = try GenerateCommandTests.run([
            "attention", "--model", "smollm2", Self.text, "--layer", "17", "--json",
        ])
        #expect(result.status == 0, "\(result.error)")
        let json = try GenerateCommandTests.object(result.output)
        #expect(json["key_value_heads"] as? [Int] == [0, 0, 0, 1, 1, 1, 2, 2, 2])
        let attention = try #require(json["attention"] as? [[[Double]]])
        #expect(attention.count == 9)
        for rows in attention {
            for (query, row) in rows.enumerated() {
                #expect(abs(row.reduce(0, +) - 1) < 1e-5)
                #expect(row[(query + 1)...].allSatisfy { $0 == 0 })
            }
        }
        let outOfRange = try GenerateCommandTests.run(["attention", "--model", "smollm2", Self.text, "--layer", "30"])
        #expect(outOfRange.status != 0 && outOfRange.error.contains("SmolLM2 has layers 0…29"), "\(outOfRange.error)")
    }

    /// `loupe heads --json`: all 270 heads with scores in range.
    @Test func headsListsEveryHead() throws {
        let result = try GenerateCommandTests.run(["heads", "--period", "20", "--json"])
        #expect(result.status == 0, "\(result.error)")
        let heads = try #require(try GenerateCommandTests.object(result.output)["heads"] as? [[String: Any]])
        #expect(heads.count == 270)
        for head in heads {
            let induction = try #require(head["induction"] as? Double)
            let sink = try #require(head["sink_mass"] as? Double)
            #expect((0...1).contains(induction) && (0...1).contains(sink))
        }
    }
}
