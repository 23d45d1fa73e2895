import Foundation
import LoupeBase
import LoupeEvals
import Testing

@Suite struct RubricParserTests {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test func theShippedRubricReadsWithItsKeysAndPassRules() throws {
        let path = Self.repositoryRoot.appendingPathComponent("rubrics/answer-quality.yaml").path
        let rubric = try RubricParser.parse(try String(contentsOfFile: path, encoding: .utf8), file: path)
        #expect(rubric.name == "answer-quality" && rubric.version == 1)
        #expect(rubric.targets == [.answer, .trace])
        #expect(rubric.criteria.map(\.name) == ["correct", "grounded", "clarity", "note"])
        #expect(rubric.criteria.map(\.required) == [true, true, true, false])
        let correct = try #require(rubric.criterion("correct"))
        #expect(rubric.passFailCriterion?.name == "correct")
        #expect(rubric.verdict(forKey: "r")?.value == .option("right"))
        #expect(rubric.verdict(forKey: "x")?.criterion.name == "grounded")
        #expect(rubric.verdict(forKey: "x")?.value == .boolean(false))
        #expect(rubric.verdict(forKey: "4")?.value == .number(4))
        #expect(rubric.verdict(forKey: "7") == nil)
        #expect(rubric.verdict(forKey: "j") == nil)
        #expect(correct.passes(.option("right")) == true && correct.passes(.option("partly")) == false)
        // Values are read by name or key; others say what is allowed.
        #expect(try correct.value("w").get() == .option("wrong"))
        guard case .failure(let error) = correct.value("maybe") else {
            Issue.record("'maybe' was taken as an option")
            return
        }
        #expect(error.description.contains("right [r], partly [p], wrong [w]"))
        let clarity = try #require(rubric.criterion("clarity"))
        #expect(clarity.takesDigit)
        #expect((try? clarity.value("4.5").get()) == nil)
        #expect((try? clarity.value("6").get()) == nil)
        #expect(try rubric.criterion("note")?.value("  keep spaces ").get() == .text("  keep spaces "))
    }

    @Test func aCategoricalCriterionNeedsTwoOptions() {
        #expect(throws: SuiteError.self) {
            try RubricParser.parse(
                "name: r\ncriteria:\n  - {name: a, kind: categorical, options: [{name: x, key: x}]}\n", file: "r.yaml")
        }
    }

    @Test func aNumericCriterionPassesAtItsThresholdAndMovesInSteps() throws {
        let rubric = try RubricParser.parse(
            """
            name: r
            criteria:
              - {name: quality, kind: numeric, range: [0, 1], step: 0.25, pass_at: 0.75}
            """, file: "r.yaml")
        let quality = try #require(rubric.criterion("quality"))
        #expect(!quality.takesDigit)
        #expect(try quality.value("0.75").get() == .number(0.75))
        #expect((try? quality.value("0.8").get()) == nil)
        #expect(quality.passes(.number(0.75)) == true && quality.passes(.number(0.5)) == false)
        #expect(rubric.targets == [.answer])
    }

    /// Every mistake is refused at the place that holds it.
    @Test(arguments: [
        (
            "name: r\ncriteria:\n  - {name: a, kind: boolean}\n  - {name: b, kind: boolean}\n", 4, 5,
            "key 't' is already"
        ),
        (
            "name: r\ncriteria:\n  - name: a\n    kind: categorical\n    options:\n      - {name: x, key: j}\n      - {name: y, key: y}\n",
            6, 24, "taken by the Review view"
        ),
        (
            "name: r\ncriteria:\n  - name: a\n    kind: categorical\n    options:\n      - {name: x, key: q1}\n", 6, 24,
            "one character"
        ),
        (
            "name: r\ncriteria:\n  - name: a\n    kind: categorical\n    options:\n      - {name: x, key: a}\n      - {name: y, key: a}\n",
            7, 24, "already a=x's"
        ),
        ("name: r\ncriteria:\n  - {name: a, kind: scale}\n", 3, 21, "kind 'scale'"),
        ("name: r\ncriteria:\n  - {name: a, kind: text, options: []}\n", 3, 36, "does not apply to a text criterion"),
        ("name: r\ncritera: []\n", 2, 1, "unknown key 'critera'"),
        (
            "name: r\ncriteria:\n  - {name: a, kind: numeric, range: [1, 5], pass_at: 9}\n", 3, 54,
            "pass_at must lie in the range"
        ),
        (
            "name: r\ncriteria:\n  - {name: a, kind: numeric, range: [1, 5]}\n  - {name: b, kind: numeric, range: [0, 9]}\n",
            4, 5, "both take digit keys"
        ),
        ("name: r\ntargets: [answer, span]\ncriteria:\n  - {name: a, kind: text}\n", 2, 19, "target 'span'"),
        ("name: r\ncriteria:\n  - {name: a b, kind: text}\n", 3, 12, "one word"),
        ("name: r\ncriteria: [\n", 3, 1, "not valid YAML"),
    ])
    func mistakesAreReportedAtTheirLineAndColumn(text: String, line: Int, column: Int, message: String) {
        do {
            _ = try RubricParser.parse(text, file: "rubrics/bad.yaml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.location.file == "rubrics/bad.yaml")
            #expect(error.location.line == line, "\(error.description)")
            #expect(error.location.column == column, "\(error.description)")
            #expect(error.message.contains(message), "\(error.description)")
        }
    }
}
