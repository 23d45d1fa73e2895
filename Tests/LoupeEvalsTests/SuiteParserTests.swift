import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import Testing

@Suite struct SuiteParserTests {
    @Test func aRetrievalSuiteReadsWithItsPathsResolvedAgainstTheSuite() throws {
        let suite = try SuiteParser.parse(
            """
            name: cranfield-bm25
            dataset: {path: ../cranfield/queries.jsonl, input: text}
            target:
              retrieval: {retriever: bm25, k: 10, stem: true, qrels: ../cranfield/qrels.trec}
            scorers: [ndcg@10, map, mrr, recall@100]
            epochs: 1
            """, file: "/data/evals/suite.yaml")
        #expect(suite.name == "cranfield-bm25")
        #expect(suite.dataset.path == "/data/cranfield/queries.jsonl" && suite.dataset.inputField == "text")
        guard case .retrieval(let target) = suite.target else {
            Issue.record("not a retrieval target")
            return
        }
        #expect(target.retriever == "bm25" && target.stem && target.qrelsPath == "/data/cranfield/qrels.trec")
        #expect(suite.scorers.map(\.kind) == [.ndcg(10), .averagePrecision, .reciprocalRank, .recall(100)])
        #expect(suite.headline == "ndcg@10")
    }

    @Test func answerScorersTakeSettingsAndANewName() throws {
        let suite = try SuiteParser.parse(
            """
            name: qa
            dataset: items.jsonl
            target: {agent: {provider: offline, max_steps: 4}}
            scorers:
              - exact
              - token_f1: {threshold: 0.5}
              - numeric: {tolerance: 0.01, relative: true, as: close-enough}
              - regex: {pattern: "\\\\d+"}
              - json_schema:
                  schema: {type: object, required: [answer], properties: {answer: {type: string}}}
              - judge: {base_url: "http://127.0.0.1:9/v1", model: m, prompt: "Grade {output} for {input}"}
            epochs: 3
            """, file: "evals/qa.yaml")
        #expect(suite.dataset.path.hasSuffix("/evals/items.jsonl"))
        #expect(suite.epochs == 3)
        #expect(suite.scorers.map(\.name) == ["exact", "token_f1", "close-enough", "regex", "json_schema", "judge"])
        #expect(suite.scorers[1].kind == .tokenF1(threshold: 0.5))
        #expect(suite.scorers[2].kind == .numeric(tolerance: 0.01, relative: true))
        #expect(suite.scorers[3].kind == .regex("\\d+"))
        guard case .jsonSchema(let schema) = suite.scorers[4].kind, case .judge(let provider, _) = suite.scorers[5].kind
        else {
            Issue.record("scorer kinds")
            return
        }
        #expect(schema["required"] == .array(["answer"]))
        #expect(provider.kind == "openai" && provider.model == "m")
    }

    @Test func theLocalModelIsAProviderForAgentsAndModelTargets() throws {
        for target in ["{agent: {provider: local, max_steps: 4}}", "{model: {provider: local, max_tokens: 64}}"] {
            let suite = try SuiteParser.parse(
                "name: x\ndataset: d.jsonl\ntarget: \(target)\nscorers: [contains]\n", file: "x.yaml")
            switch suite.target {
            case .agent(let agent): #expect(agent.provider.kind == "local")
            case .model(let model): #expect(model.provider.kind == "local")
            default: Issue.record("\(suite.target)")
            }
        }
        let error = #expect(throws: (any Error).self) {
            try SuiteParser.parse(
                "name: x\ndataset: d.jsonl\ntarget: {agent: {provider: llama}}\nscorers: [contains]\n", file: "x.yaml")
        }
        #expect("\(error.map { "\($0)" } ?? "")".contains("provider 'llama': use offline, local or openai"))
    }

    @Test(arguments: [
        ("name: x\ndataset: d.jsonl\ntarget: {agent: {}}\nscorers: [exact]\nepoch: 3\n", 5, 1, "unknown key 'epoch'"),
        ("name: x\ndataset: d.jsonl\ntarget: {agent: {}}\nscorers: [exact, fuzzy]\n", 4, 18, "unknown scorer 'fuzzy'"),
        ("name: x\ndataset: d.jsonl\ntarget: {agent: {}}\nscorers: [ndcg@10]\n", 4, 11, "scores rankings"),
        ("name: x\ndataset: d.jsonl\ntarget: {retrieval: {qrels: q}}\nscorers: [exact]\n", 4, 11, "a retrieval target"),
        ("name: x\ndataset: d.jsonl\ntarget: {agent: {max_steps: many}}\nscorers: [exact]\n", 3, 29, "whole number"),
        ("name: x\ndataset: d.jsonl\ntarget: {agent: {}, model: {}}\nscorers: [exact]\n", 3, 9, "exactly one"),
        ("name: x\ndataset: d.jsonl\nscorers: [exact]\n", 1, 1, "needs a target"),
        ("name: x\ndataset: [d.jsonl\n", 3, 1, "not valid YAML"),
        (
            "name: x\ndataset: d.jsonl\ntarget: {agent: {}}\nscorers:\n  - regex: {pattern: \"(\"}\n", 5, 22,
            "not a valid"
        ),
        ("name: x\ndataset: d.jsonl\ntarget: {agent: {}}\nscorers: [exact, exact]\n", 4, 18, "two scorers"),
        // items × epochs overflowed Int when planning the run.
        (
            "name: x\ndataset: d.jsonl\ntarget: {agent: {}}\nscorers: [exact]\nepochs: 4611686018427387904\n", 5, 9,
            "epochs must be at most 1000"
        ),
        ("name: x\ndataset: d.jsonl\ntarget: {agent: {timeout: .inf}}\nscorers: [exact]\n", 3, 27, "finite number"),
    ])
    func mistakesNameTheLineAndColumn(yaml: String, line: Int, column: Int, message: String) {
        do {
            _ = try SuiteParser.parse(yaml, file: "bad.yaml")
            Issue.record("accepted: \(yaml)")
        } catch {
            #expect(
                error.location == LoupeBase.SourceLocation(file: "bad.yaml", line: line, column: column), "\(error)")
            #expect(error.message.contains(message), "\(error)")
            #expect(error.description.hasPrefix("bad.yaml:\(line):\(column): "))
        }
    }

    @Test func datasetItemsKeepTargetsConfidenceAndMetadata() throws {
        var spec = DatasetSpec(path: "items.jsonl")
        spec.inputField = "question"
        let items = try Dataset.items(
            Data(
                """
                {"id": "a", "question": "2+2?", "target": ["4", "four"], "confidence": 0.9, "topic": "math"}

                {"id": 7, "question": [{"role": "user", "content": "hello"}], "target": 3}
                {"question": "no id"}
                """.utf8), spec: spec)
        #expect(items.map(\.id) == ["a", "7", "4"])
        #expect(
            items[0].targets == ["4", "four"] && items[0].confidence == 0.9 && items[0].metadata["topic"] == "math")
        #expect(items[1].input == "hello" && items[1].targets == ["3"] && items[1].line == 3)
    }

    @Test(arguments: [
        ("{\"id\": 1, \"input\": \"a\"}\n{\"id\": 1, \"input\": \"b\"}\n", 2, "used again (first on line 1)"),
        ("{\"id\": 1, \"input\": \"a\"}\n{\"id\": 2, \"input\": \"b\",}\n", 2, "not valid JSON"),
        ("{\"id\": 1, \"text\": \"a\"}\n", 1, "no 'input' field"),
        ("[1, 2]\n", 1, "must be a JSON object"),
        ("{\"id\": 1, \"input\": \"a\", \"confidence\": 2}\n", 1, "in [0, 1]"),
    ])
    func badDatasetLinesAreNamed(text: String, line: Int, message: String) {
        do {
            _ = try Dataset.items(Data(text.utf8), spec: DatasetSpec(path: "d.jsonl"))
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.location.line == line && error.message.contains(message), "\(error)")
            #expect(error.description.hasPrefix("d.jsonl:\(line)"))
        }
    }
}
