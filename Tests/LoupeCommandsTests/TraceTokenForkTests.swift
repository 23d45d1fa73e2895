import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// `loupe trace fork ID --at-token SPAN:INDEX` end to end through the real binary on a real
/// SmolLM2-135M agent run (`agent run --provider local`): the fork's step starts with the
/// parent's tokens, then the chosen alternative with the probability the parent recorded for
/// it; greedy decoding from there is the same each time; `trace diff` compares the runs.
///
/// Needs the model (`scripts/fetch-smollm2`); a missing one fails with the command that fetches it.
@Suite(.serialized) struct TraceTokenForkTests {
    /// A recorded local run: the workspace file, the trace id and the first model call's ordinal.
    static func localRun() throws -> (file: String, trace: Int64, span: Int) {
        let (file, run) = try LocalAgentTests.calculatorRun()
        try #require(run.status == 0 || run.error.contains("step limit 2 reached"), "\(run.output)\(run.error)")
        return (file, 1, 1)
    }

    /// The generated tokens of `span` in `trace`, as `trace tokens --json` gives them.
    static func tokens(_ file: String, trace: Int64, span: Int) throws -> [JSONValue] {
        let result = try TestEnvironment.run([
            "--workspace", file, "trace", "tokens", String(trace), "--span", String(span), "--json",
        ])
        try #require(result.status == 0, "\(result.error)")
        let spans = try #require(try JSONValue.parse(Data(result.output.utf8)).array)
        return try #require(spans.first?["choices"]?.array?.first?.array)
    }

    static func fork(_ file: String, _ arguments: [String]) throws -> JSONValue {
        let result = try TestEnvironment.run(["--workspace", file, "trace", "fork"] + arguments + ["--json"])
        try #require(result.status == 0, "\(result.output)\(result.error)")
        return try JSONValue.parse(Data(result.output.utf8))
    }

    @Test func aForkAtATokenTakesTheAlternativeAndGoesOnFromThere() throws {
        let (file, trace, span) = try Self.localRun()
        let parent = try Self.tokens(file, trace: trace, span: span)
        // The first token where the model took its most likely token and had another in view.
        let index = try #require(
            parent.indices.first { i in
                let top = parent[i]["alternatives"]?.array ?? []
                return i > 2 && top.count >= 2 && top[0]["id"] == parent[i]["id"]
            })
        let second = try #require(parent[index]["alternatives"]?.array?[1])
        let made = try Self.fork(file, [String(trace), "--at-token", "\(span):\(index)", "--choose", "2"])
        let id = try #require(made["fork"]?.int)
        #expect(made["forked_from"]?["parent"] == .number(Double(trace)))
        #expect(made["forked_from"]?["token"] == .number(Double(index)))
        #expect(made["forked_from"]?["replacement"] == second["text"])
        // The fork ran under its parent's limits (`agent run --max-steps 2`), not the command's
        // defaults (8 steps): its model calls, the parent's before the fork included, stop at 2.
        let forkTrace = try TraceService(workspace: try Workspace(path: file)).trace(id)
        #expect(AgentLimits(recordedOn: forkTrace.spans[0])?.maxSteps == 2)
        #expect(forkTrace.spans.filter { $0.kind == .llm && !$0.status.isError }.count <= 2)

        let forked = try Self.tokens(file, trace: id, span: span)
        try #require(forked.count > index, "the fork's step has \(forked.count) tokens")
        // The parent's tokens before the fork, each with the probability the parent recorded
        // (one prefill pass against the parent's one decode step a token: float rounding).
        for i in 0..<index {
            #expect(forked[i]["id"] == parent[i]["id"], "token \(i)")
            let (a, b) = (forked[i]["logprob"]?.number ?? 1, parent[i]["logprob"]?.number ?? 0)
            #expect(abs(a - b) < 5e-3, "token \(i): \(a) against \(b)")
        }
        // Then the alternative, as likely as the parent's step said it was.
        #expect(forked[index]["id"] == second["id"])
        #expect(abs((forked[index]["logprob"]?.number ?? 1) - (second["logprob"]?.number ?? 0)) < 5e-3)

        // Greedy from there: the same tokens again.
        let again = try Self.fork(file, [String(trace), "--at-token", "\(span):\(index)", "--choose", "2"])
        let repeated = try Self.tokens(file, trace: try #require(again["fork"]?.int), span: span)
        #expect(repeated.map { $0["id"] } == forked.map { $0["id"] })

        // The link, and the diff of the two runs: the same steps up to the forked call.
        let list = try TestEnvironment.run(["--workspace", file, "trace", "diff", String(trace), String(id), "--json"])
        let diff = try JSONValue.parse(Data(list.output.utf8))
        // The diff names the fork point down to the token, and what replaced it.
        let original = try #require(parent[index]["text"]?.string)
        let replacement = try #require(second["text"]?.string)
        let link =
            "trace \(id) forks trace \(trace) at span \(span), token #\(index) "
            + "\"\(UntrustedText.sanitized(original))\" → \"\(UntrustedText.sanitized(replacement))\""
        #expect(diff["fork"] == .string(link))
        #expect(diff["fork_point"]?["token"] == .number(Double(index)))
        #expect(diff["fork_point"]?["original"] == .string(original))
        #expect(diff["fork_point"]?["replacement"] == .string(replacement))
        let plain = try TestEnvironment.run(["--workspace", file, "trace", "diff", String(trace), String(id)])
        #expect(plain.output.contains("  ↳ " + link + "\n"), "\(plain.output)")
        let rows = try #require(diff["rows"]?.array)
        #expect(rows.first?["left"]?["ordinal"] == .number(Double(span)))
        #expect(rows.first?["right"]?["ordinal"] == .number(Double(span)))
    }

    @Test func typedTextReplacesTheAnswerFromTheToken() throws {
        let (file, trace, span) = try Self.localRun()
        let parent = try Self.tokens(file, trace: trace, span: span)
        try #require(parent.count > 4)
        let made = try Self.fork(file, [String(trace), "--at-token", "\(span):4", "--text", " I do not know"])
        let forked = try Self.tokens(file, trace: try #require(made["fork"]?.int), span: span)
        #expect(forked.prefix(4).map { $0["id"] } == parent.prefix(4).map { $0["id"] })
        let text = forked.compactMap { $0["text"]?.string }.joined()
        let before = parent.prefix(4).compactMap { $0["text"]?.string }.joined()
        #expect(text.hasPrefix(before + " I do not know"), "\(text)")
    }

    /// Text the tool-call grammar refuses, forced inside `<tool_call>` (after its first token,
    /// "<"): the text is honoured, the model goes on unconstrained, and the fork says so (its
    /// JSON, its summary, its step's attributes) rather than passing an ungrammatical reply off
    /// as a constrained one.
    @Test func aForkOutsideTheToolCallGrammarSaysItLeftIt() throws {
        let (file, trace, span) = try Self.localRun()
        let parent = try Self.tokens(file, trace: trace, span: span)
        let opening = parent.prefix(8).compactMap { $0["text"]?.string }.joined()
        try #require(
            parent.first?["text"]?.string == "<" && opening.hasPrefix("<tool_call>"),
            "the step opens a tool call: \(opening)")
        let made = try Self.fork(file, [String(trace), "--at-token", "\(span):1", "--text", " I do not know"])
        #expect(made["forked_from"]?["grammar_left_at"] == .number(1))
        let said = made["forked_from"]?["grammar_left"]?.string ?? ""
        #expect(said.contains("the forced token 1") && said.contains("went on unconstrained"), "\(said)")
        let id = try #require(made["fork"]?.int)
        let forked = try Self.tokens(file, trace: id, span: span)
        let text = forked.compactMap { $0["text"]?.string }.joined()
        #expect(text.hasPrefix("< I do not know"), "\(text)")
        let step = try TraceService(workspace: try Workspace(path: file)).trace(id).spans[span]
        #expect(step.attributes["loupe.fork.grammar_left_at"] == .number(1))
        #expect(step.attributes["loupe.llm.grammar"]?.string?.contains("left at token 1") == true)

        let plain = try TestEnvironment.run([
            "--workspace", file, "trace", "fork", String(trace), "--at-token", "\(span):1", "--text", " I do not know",
        ])
        #expect(plain.status == 0, "\(plain.error)")
        #expect(plain.output.contains("⚠ the forced token 1"), "\(plain.output)")

        // A fork the grammar accepts says nothing of the kind.
        let kept = try Self.fork(file, [String(trace), "--at-token", "\(span):1", "--text", "tool_call>"])
        #expect(kept["forked_from"]?["grammar_left_at"] == nil)
    }

    @Test func whatCannotBeForkedIsSaid() throws {
        let (file, trace, span) = try Self.localRun()
        func failure(_ arguments: [String]) throws -> String {
            let result = try TestEnvironment.run(["--workspace", file, "trace", "fork", String(trace)] + arguments)
            #expect(result.status != 0, "\(arguments)")
            return result.error
        }
        #expect(try failure(["--at-token", "1-4", "--choose", "2"]).contains("expected SPAN:INDEX"))
        #expect(try failure(["--at-token", "\(span):0"]).contains("--choose K (an alternative) or --text TEXT"))
        #expect(try failure(["--at-token", "\(span):99999", "--choose", "2"]).contains("give a token index 0…"))
        #expect(try failure(["--at-token", "\(span):0", "--choose", "9"]).contains("choose 1…5"))
        // The root is no model call, nor is the tool call after the first.
        #expect(try failure(["--at-token", "\(span + 1):0", "--choose", "2"]).contains("can be forked at a token"))
        // The alternative the model took is no fork (at a token it chose among its alternatives:
        // the grammar forces some it did not).
        let parent = try Self.tokens(file, trace: trace, span: span)
        let index = try #require(
            parent.indices.first { i in
                parent[i]["alternatives"]?.array?.contains { $0["id"] == parent[i]["id"] } == true
            })
        let top = try #require(parent[index]["alternatives"]?.array)
        let taken = try #require(top.firstIndex { $0["id"] == parent[index]["id"] })
        #expect(
            try failure(["--at-token", "\(span):\(index)", "--choose", "\(taken + 1)"]).contains(
                "is the token the model chose"))
    }
}
