import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import Testing

@Suite struct ScorerTests {
    func score(_ kind: ScorerSpec.Kind, _ output: String, targets: [String]) throws -> Verdict {
        try AnswerScorer.score(
            ScorerSpec(name: "s", kind: kind), output: output, item: EvalItem(id: "i", input: "q", targets: targets))
    }

    /// Values from SQuAD v2.0's official evaluate script (normalize_answer, compute_f1), run on
    /// these strings with Python.
    @Test(arguments: [
        ("The Eiffel Tower, in Paris!", "eiffel tower", "eiffel tower in paris", 0.6666666666666666),
        ("It's the theory of an aerofoil.", "aerofoil theory", "its theory of aerofoil", 0.6666666666666666),
        ("Mach 3.5 — the flow", "mach 35 flow", "mach 35 — flow", 0.8571428571428571),
        ("Denver Broncos won Super Bowl 50", "Denver Broncos", "denver broncos won super bowl 50", 0.5),
    ])
    func normalisationAndTokenF1MatchSQuADsScript(prediction: String, target: String, normalized: String, f1: Double) {
        #expect(TextNormalizer.normalize(prediction) == normalized)
        #expect(abs(TextNormalizer.tokenF1(prediction, target) - f1) < 1e-12)
    }

    @Test func exactNormalisedAndContains() throws {
        #expect(try score(.exact, " Paris\n", targets: ["London", "Paris"]).passed == true)
        #expect(try score(.exact, "paris", targets: ["Paris"]).passed == false)
        #expect(try score(.normalizedExact, "The Paris.", targets: ["paris"]).passed == true)
        #expect(try score(.contains, "It is Paris, France.", targets: ["paris"]).passed == true)
        // Whole words only: "art" is not in "the start".
        #expect(try score(.contains, "the start", targets: ["art"]).passed == false)
        let verdict = try score(.contains, "no", targets: ["yes"])
        #expect(verdict.value == 0 && verdict.explanation.contains("none of"))
    }

    @Test func aScorerWithoutTargetsIsAnErrorNotAFail() {
        #expect(throws: ScorerError.self) { try score(.exact, "x", targets: []) }
    }

    @Test func regexAndNumericTolerance() throws {
        #expect(try score(.regex(#"\b\d{4}\b"#), "in 1957 it flew", targets: []).explanation.contains("\"1957\""))
        #expect(try score(.regex(#"^\d+$"#), "about 12", targets: []).passed == false)
        #expect(
            try score(.numeric(tolerance: 0.01, relative: false), "so the result is 1,260.004.", targets: ["1260"])
                .passed == true)
        #expect(try score(.numeric(tolerance: 0.01, relative: false), "1260.5", targets: ["1260"]).passed == false)
        #expect(try score(.numeric(tolerance: 0.01, relative: true), "1270", targets: ["1260"]).passed == true)
        #expect(
            try score(.numeric(tolerance: 0, relative: false), "no digits", targets: ["3"]).explanation
                == "no number in the answer")
        #expect(throws: ScorerError.self) {
            try score(.numeric(tolerance: 0, relative: false), "3", targets: ["three"])
        }
    }

    @Test func jsonSchemaNamesThePlaceOfTheFirstViolation() throws {
        let schema = try JSONValue.parse(
            #"{"type": "object", "required": ["answer", "sources"], "additionalProperties": false,"#
                + #" "properties": {"answer": {"type": "string", "minLength": 1},"#
                + #" "sources": {"type": "array", "items": {"type": "integer", "minimum": 1}}}}"#)
        #expect(
            try score(.jsonSchema(schema), "```json\n{\"answer\": \"x\", \"sources\": [1, 2]}\n```", targets: []).passed
                == true)
        #expect(
            try score(.jsonSchema(schema), #"{"answer": "x"}"#, targets: []).explanation
                == "at /: missing required property 'sources'")
        #expect(
            try score(.jsonSchema(schema), #"{"answer": "x", "sources": [1, 0]}"#, targets: []).explanation
                == "at /sources/1: 0.0 is below 1.0")
        #expect(
            try score(.jsonSchema(schema), #"{"answer": "x", "sources": [1.5]}"#, targets: []).explanation
                == "at /sources/0: expected integer, found number")
        #expect(
            try score(.jsonSchema(schema), #"{"answer": "x", "sources": [], "extra": 1}"#, targets: []).explanation
                == "at /: property 'extra' is not allowed")
        #expect(try score(.jsonSchema(schema), "answer: x", targets: []).explanation.hasPrefix("not JSON"))
    }

    @Test func embeddingSimilarityUsesTheBestTargetAndTheThreshold() throws {
        // Unit vectors: the output is [1, 0]; targets at 60° and 0°.
        let tools = ScoringTools(embed: { texts in
            texts.map { $0 == "out" ? [1, 0] : $0 == "near" ? [1, 0] : [0.5, 0.8660254] }
        })
        let spec = ScorerSpec(name: "sim", kind: .embedding(threshold: 0.8))
        let close = try AnswerScorer.score(
            spec, output: "out", item: EvalItem(id: "i", input: "q", targets: ["far", "near"]), tools: tools)
        #expect(close.passed == true && abs(close.value - 1) < 1e-6 && close.explanation.contains("\"near\""))
        let far = try AnswerScorer.score(
            spec, output: "out", item: EvalItem(id: "i", input: "q", targets: ["far"]), tools: tools)
        #expect(far.passed == false && abs(far.value - 0.5) < 1e-6)
        #expect(throws: ScorerError.self) {
            try AnswerScorer.score(spec, output: "out", item: EvalItem(id: "i", input: "q", targets: ["far"]))
        }
    }

    @Test(arguments: [
        ("The answer names the city.\nGRADE: C", 1.0), ("GRADE: P", 0.5), ("Reasoning… GRADE: I", 0.0),
        ("GRADE: I at first, but on reflection GRADE: C", 1.0), ("Yes, it is correct.", 1.0), ("incorrect", 0.0),
        ("0.7", 0.7),
    ])
    func judgeVerdictsAreRead(verdict: String, value: Double) {
        #expect(JudgeVerdict.value(verdict) == value)
    }

    @Test func aVerdictWithoutAGradeIsNotGuessed() {
        #expect(JudgeVerdict.value("I think the answer is fine") == nil)
        #expect(JudgeVerdict.value("7 out of 10") == nil)
    }

    @Test func summariesPickTheIntervalThatFitsTheData() {
        // Single epoch, pass/fail: Wilson. Repeated: Wilson over the effective trials (clustered
        // by item), pass@k and pass^k.
        let single = (0..<20).map {
            ScoredRow(itemID: "\($0)", epoch: 1, values: ["s": $0 < 15 ? 1 : 0], passed: ["s": $0 < 15])
        }
        let summary = RunSummary(rows: single, scorers: ["s"])
        #expect(summary.scorers[0].interval == .wilson(successes: 15, n: 20))
        #expect(summary.scorers[0].passAtK.isEmpty)
        let repeated = (0..<10).flatMap { item in
            (1...3).map { epoch in
                ScoredRow(
                    itemID: "\(item)", epoch: epoch, values: ["s": 0],
                    passed: ["s": item < 4 || (item < 7 && epoch == 1)])
            }
        }
        let clustered = RunSummary(rows: repeated, scorers: ["s"]).scorers[0]
        #expect(clustered.interval.method == "wilson-clustered" && clustered.interval.n == 10)
        #expect(abs(clustered.interval.estimate - (4 + 3.0 / 3) / 10) < 1e-12)
        #expect(clustered.passAtK.map(\.k) == [1, 2, 3])
        #expect(abs(clustered.passAtK[2].passAt - 0.7) < 1e-12 && abs(clustered.passAtK[2].passHat - 0.4) < 1e-12)
        // Continuous: Student-t cut to [0, 1]; a pass rate's interval lies in [0, 1] and holds it.
        let continuous = RunSummary(
            rows: (0..<5).map { ScoredRow(itemID: "\($0)", epoch: 1, values: ["f1": Double($0) / 4]) }, scorers: ["f1"])
        #expect(continuous.scorers[0].interval == Interval.studentT([0, 0.25, 0.5, 0.75, 1]).clamped(to: 0...1))
        let few = (0..<3).flatMap { item in
            (1...2).map {
                ScoredRow(itemID: "\(item)", epoch: $0, values: ["s": 1], passed: ["s": item > 0 || $0 == 1])
            }
        }
        let bounded = RunSummary(rows: few, scorers: ["s"]).scorers[0].interval
        #expect(bounded.method == "wilson-clustered")
        #expect(bounded.lower > 0 && bounded.lower < 5.0 / 6 && bounded.upper > 5.0 / 6 && bounded.upper < 1)
    }
}
