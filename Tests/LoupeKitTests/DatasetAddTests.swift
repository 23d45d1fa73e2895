import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import Testing

/// `dataset add` on the sample Inspect AI log's run and traces, and suites made from another.
@Suite struct DatasetAddTests {
    @Test func anAnswerAndATraceBecomeItemsThatLinkBack() throws {
        let workspace = try KitFixtures.workspace("dataset")
        let traces = TraceService(workspace: workspace)
        _ = try traces.importFiles([KitFixtures.path("sample-data/traces/inspect-arith.eval")])
        let run = try #require(try workspace.evals.evalRuns().first?.id)
        let answer = try #require(
            try workspace.evals.evalResults(run: run).first { $0.itemID == "q2" && $0.epoch == 2 })
        let service = EvalService(workspace: workspace)
        let directory = try KitFixtures.temporaryDirectory("dataset-files")
        let dataset = directory + "/kept.jsonl"

        let first = try service.addToDataset(
            dataset, from: try EvalService.DatasetSource("answer:\(run)/q2/2"), expected: nil, id: nil, suite: nil,
            like: nil)
        #expect(first.id == "q2" && first.line == 1 && first.input == answer.input)
        // The same answer again gets a new id; an expected output given replaces the targets.
        let second = try service.addToDataset(
            dataset, from: .answer(run: run, item: "q2", epoch: 2), expected: "42", id: nil, suite: nil, like: nil)
        #expect(second.id == "q2-2" && second.line == 2 && second.expected == ["42"])
        #expect(throws: EvalError.self) {
            try service.addToDataset(
                dataset, from: .answer(run: run, item: "q2", epoch: 2), expected: nil, id: "q2", suite: nil, like: nil)
        }
        #expect(throws: EvalError.self) {
            try service.addToDataset(
                dataset, from: .answer(run: run, item: "q9", epoch: 1), expected: nil, id: nil, suite: nil, like: nil)
        }
        let trace = try #require(answer.traceID)
        let third = try service.addToDataset(
            dataset, from: .trace(trace), expected: nil, id: nil, suite: nil, like: nil)
        let output = try #require(answer.output)
        #expect(third.id == "trace-\(trace)" && !third.input.isEmpty && third.expected == [output])

        let items = try Dataset.items(Data(contentsOf: URL(fileURLWithPath: dataset)), spec: DatasetSpec(path: dataset))
        #expect(items.map(\.id) == ["q2", "q2-2", "trace-\(trace)"])
        let targets = try JSONValue.parse(answer.targetsJSON).array?.map(\.text)
        #expect(items[0].targets == targets)
        let source = try #require(items[0].metadata["source"])
        #expect(source["run"]?.number == Double(run) && source["item"]?.string == "q2" && source["epoch"]?.number == 2)
        #expect(source["trace"]?.number == Double(trace))
        #expect(source["workspace"]?.string == URL(fileURLWithPath: workspace.path).standardizedFileURL.path)
        #expect(items[2].metadata["source"]?["trace"]?.number == Double(trace))

        // A session (an Inspect sample's two epochs): the first turn as messages, the last answer the target.
        let session = try #require(try traces.sessions().first { $0.turns.count == 2 })
        let fourth = try service.addToDataset(
            dataset, from: try EvalService.DatasetSource("session:\(session.id)"), expected: nil, id: nil, suite: nil,
            like: nil)
        let kept = try Dataset.items(Data(contentsOf: URL(fileURLWithPath: dataset)), spec: DatasetSpec(path: dataset))
        let last = try #require(kept.last)
        #expect(last.id == fourth.id && fourth.id.hasPrefix("session-"))
        #expect(last.metadata["source"]?["session"]?.string == session.id)
        let lastTurn = try traces.trace(try #require(session.turns.last?.id))
        #expect(
            last.targets == [try #require(EvalService.finalAnswer(lastTurn.spans.sorted { $0.startNs < $1.startNs }))])
        // Three messages (user, assistant, user), their contents joined as the input.
        #expect(last.input.split(separator: "\n").count >= 3)
        #expect(throws: EvalError.self) {
            try service.addToDataset(dataset, from: .session("nope"), expected: nil, id: nil, suite: nil, like: nil)
        }

        #expect(throws: EvalError.self) { try EvalService.DatasetSource("answer:x/q1") }
        #expect(throws: EvalError.self) { try EvalService.DatasetSource("span:1/2") }
        #expect(try EvalService.DatasetSource("answer:3/a/b") == .answer(run: 3, item: "a/b", epoch: 1))
        #expect(try EvalService.DatasetSource("step:4/ab12") == .step(trace: 4, span: "ab12"))
    }

    @Test func aSuiteMadeFromAnotherKeepsItsTargetScorersAndJudgments() throws {
        let base = KitFixtures.path("sample-data/evals/cranfield-bm25.yaml")
        let directory = try KitFixtures.temporaryDirectory("dataset-suite")
        let file = directory + "/nested/kept.yaml"
        let yaml = try SuiteParser.derived(
            from: try String(contentsOfFile: base, encoding: .utf8), file: base, as: file,
            dataset: directory + "/kept.jsonl", description: "kept")
        let derived = try SuiteParser.parse(yaml, file: file)
        let original = try SuiteParser.parse(try String(contentsOfFile: base, encoding: .utf8), file: base)
        #expect(derived.name == "kept" && derived.description == "kept")
        #expect(derived.dataset.path == directory + "/kept.jsonl")
        #expect(derived.scorers == original.scorers && derived.target == original.target)
        #expect(yaml.contains("dataset: ../kept.jsonl"))
        #expect(SuiteParser.relative("/a/b/c.txt", from: "/a/x/y") == "../../b/c.txt")
        #expect(SuiteParser.relative("/a/b/c.txt", from: "/a/b") == "c.txt")
    }
}
