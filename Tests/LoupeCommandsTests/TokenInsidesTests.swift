import Foundation
import LoupeApp
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeModels
import LoupeStore
import LoupeTUI
import LoupeTensor
import LoupeTerminal
import Testing

/// SmolLM2's attention and logit lens at a generated token of a real local agent run
/// (`agent run --provider local`, TraceTokenForkTests.localRun): `loupe attention --model smollm2`
/// and `loupe lens` with `--trace/--span/--token`, and `a` and `l` in the Traces panel's token
/// view through the real loop, which show the same numbers.
///
/// The context is what the step recorded (its prompt's token ids, then the tokens it generated
/// before the one chosen), checked against the model's own forward pass.
@Suite(.serialized) struct TokenInsidesTests {
    static func json(_ file: String, _ arguments: [String]) throws -> JSONValue {
        let run = try TestEnvironment.run(["--workspace", file] + arguments + ["--json"])
        try #require(run.status == 0, "\(arguments): \(run.error)")
        return try JSONValue.parse(Data(run.output.utf8))
    }

    /// Log-probabilities of the last row of `logits` over the vocabulary (Double, stable).
    static func logSoftmax(_ logits: Tensor, row: Int) -> [Double] {
        let values = logits.row(row).map(Double.init)
        let top = values.max() ?? 0
        let total = log(values.reduce(0) { $0 + exp($1 - top) }) + top
        return values.map { $0 - total }
    }

    /// The context read from the trace is the one the step chose its token in: the model's own
    /// forward pass (the quantized path the agent ran) over it gives the chosen token and each
    /// recorded alternative the log-probability the step recorded (one prefill pass against the
    /// step's decode steps: float rounding). A context off by one token would not.
    @Test func theContextIsTheOneTheStepChoseItsTokenIn() throws {
        let (file, trace, span) = try TraceTokenForkTests.localRun()
        let tokens = try TraceTokenForkTests.tokens(file, trace: trace, span: span)
        let stored = try TraceService(workspace: try Workspace(path: file)).trace(trace)
        let generator = try ModelLibrary.standard(environment: ProcessInfo.processInfo.environment).smolLM2()
        let uncertain = tokens.indices.first { (tokens[$0]["logprob"]?.number ?? 0) < log(0.3) } ?? 1
        for index in Set([0, uncertain, tokens.count - 1]).sorted() {
            let context = try TokenContext(
                stored, id: trace, at: span, token: index, vocabulary: generator.tokenizer.count)
            #expect(context.query == context.ids.count - 1)
            let logprobs = Self.logSoftmax(try generator.model.logits(for: context.ids), row: context.query)
            let recorded = tokens[index]
            let id = try #require(recorded["id"]?.int)
            #expect(context.chosen.id == Int32(id))
            let (model, step) = (logprobs[Int(id)], recorded["logprob"]?.number ?? 0)
            #expect(abs(model - step) < 5e-3, "token \(index): \(model) against \(step)")
            for alternative in recorded["alternatives"]?.array ?? [] {
                let other = Int(alternative["id"]?.int ?? 0)
                let (a, b) = (logprobs[other], alternative["logprob"]?.number ?? 0)
                #expect(abs(a - b) < 5e-3, "token \(index), alternative \(other): \(a) against \(b)")
            }
        }
    }

    /// `loupe lens --trace --span --token` (the float path): its last layer is the model's own
    /// prediction at that position (the float forward pass over the same context), its chosen
    /// token the one the step recorded, and its top tokens largely the step's alternatives (the
    /// step ran the quantized path, whose probabilities differ by a few hundredths).
    @Test func theLensAtATokenEndsInTheModelsOwnPrediction() throws {
        let (file, trace, span) = try TraceTokenForkTests.localRun()
        let tokens = try TraceTokenForkTests.tokens(file, trace: trace, span: span)
        let stored = try TraceService(workspace: try Workspace(path: file)).trace(trace)
        let generator = try ModelLibrary.standard(environment: ProcessInfo.processInfo.environment).smolLM2(
            precision: .f32)
        let index = tokens.indices.first { (tokens[$0]["logprob"]?.number ?? 0) < log(0.3) } ?? 0
        let lens = try Self.json(
            file, ["lens", "--trace", String(trace), "--span", String(span), "--token", String(index), "--top", "5"])
        #expect(abs((lens["recorded_logprob"]?.number ?? 1) - (tokens[index]["logprob"]?.number ?? 0)) < 1e-9)
        let layers = try #require(lens["layers"]?.array)
        #expect(layers.count == 31, "the embeddings and 30 layers")
        let last = try #require(layers.last)
        #expect(last["chosen"]?["id"] == tokens[index]["id"])
        let context = try TokenContext(stored, id: trace, at: span, token: index, vocabulary: generator.tokenizer.count)
        #expect(lens["position"]?.int == Int64(context.query))
        let own = Self.logSoftmax(try generator.model.logits(for: context.ids), row: context.query)
        for entry in (last["top"]?.array ?? []) + [last["chosen"] ?? .null] {
            let id = Int(try #require(entry["id"]?.int))
            #expect(abs((entry["logprob"]?.number ?? 0) - own[id]) < 1e-3, "\(entry.compactJSON) against \(own[id])")
        }
        let recordedIDs = Set((tokens[index]["alternatives"]?.array ?? []).compactMap { $0["id"]?.int })
        let lensIDs = Set((last["top"]?.array ?? []).compactMap { $0["id"]?.int })
        #expect(recordedIDs.intersection(lensIDs).count >= 3, "\(recordedIDs) against \(lensIDs)")
    }

    @Test func theAttentionAtATokenReadsTheWholeContextOnce() throws {
        let (file, trace, span) = try TraceTokenForkTests.localRun()
        let tokens = try TraceTokenForkTests.tokens(file, trace: trace, span: span)
        let index = min(3, tokens.count - 1)
        let read = try Self.json(
            file,
            [
                "attention", "--model", "smollm2", "--trace", String(trace), "--span", String(span), "--token",
                String(index),
            ])
        let prompt = Int(try #require(read["prompt_tokens"]?.int))
        let context = try #require(read["tokens"]?.array)
        #expect(context.count == prompt + index)
        #expect(read["query"]?.int == Int64(context.count - 1))
        #expect(read["chosen"] == tokens[index]["text"])
        // The tokens generated before it, in order, end the context.
        #expect(Array(context.suffix(index)) == tokens.prefix(index).map { $0["text"] ?? .null })
        #expect(read["key_value_heads"] == .array([0, 0, 0, 1, 1, 1, 2, 2, 2].map { .number(Double($0)) }))
        let layers = try #require(read["attention"]?.array)
        #expect(layers.count == 30)
        for layer in layers {
            let heads = try #require(layer.array)
            #expect(heads.count == 9)
            for head in heads {
                let row = try #require(head.array?.compactMap { $0.number })
                #expect(row.count == context.count)
                #expect(abs(row.reduce(0, +) - 1) < 1e-4)
            }
        }
        // Its text form: one layer's heads and what each attends to most.
        let text = try TestEnvironment.run([
            "--workspace", file, "attention", "--model", "smollm2", "--trace", String(trace), "--span", String(span),
            "--token", String(index), "--layer", "3",
        ])
        #expect(text.status == 0 && text.output.contains("head  kv  entropy  attends to most"), "\(text.error)")
    }

    @Test func aTokenThatCannotBeReadSaysWhy() throws {
        let (file, trace, span) = try TraceTokenForkTests.localRun()
        func failure(_ arguments: [String]) throws -> String {
            let run = try TestEnvironment.run(["--workspace", file] + arguments)
            #expect(run.status != 0, "\(arguments)")
            return run.error
        }
        let t = String(trace)
        #expect(try failure(["lens", "--trace", t, "--span", String(span)]).contains("go together"))
        #expect(try failure(["lens", "hello", "--trace", t, "--span", "1", "--token", "0"]).contains("not both"))
        #expect(
            try failure(["lens", "--trace", t, "--span", String(span), "--token", "99999"]).contains(
                "give a token index 0…"))
        #expect(
            try failure(["lens", "--trace", t, "--span", String(span + 1), "--token", "0"]).contains(
                "can be read at a token"))
        #expect(
            try failure(["attention", "--trace", t, "--span", String(span), "--token", "0"]).contains("--model smollm2")
        )
        #expect(try failure(["lens", "--trace", "999", "--span", "1", "--token", "0"]).contains("999"))
    }

    /// `T`, then `a` and `l` in the Traces panel through the real loop: the attention view opens on
    /// the head that reads one earlier token most sharply, with the tokens it attends to as the
    /// command prints them; the lens shows what the step recorded and what each layer predicts.
    @Test func aAndLInTheTokenViewShowTheCommandsNumbers() throws {
        let (file, trace, span) = try TraceTokenForkTests.localRun()
        let read = try Self.json(
            file, ["attention", "--model", "smollm2", "--trace", String(trace), "--span", String(span), "--token", "0"])
        let context = try #require(read["tokens"]?.array?.compactMap { $0.string })
        var best = (layer: 0, head: 0, p: -1.0)
        for (l, layer) in (read["attention"]?.array ?? []).enumerated() {
            for (h, head) in (layer.array ?? []).enumerated() {
                let p = head.array?.dropFirst().compactMap { $0.number }.max() ?? 0
                if p > best.p { best = (l, h, p) }
            }
        }
        let row = try #require(read["attention"]?.array?[best.layer].array?[best.head].array?.compactMap { $0.number })
        let key = try #require(row.indices.dropFirst().max { row[$0] < row[$1] })

        let session = WorkspaceSession(
            path: file, displayPath: "w.sqlite", busyTimeout: 2, themes: TestEnvironment.themes)
        let size = Size(width: 120, height: 36)
        let executor = CommandExecutor(session: session, isInsideTUI: true)
        let backend = HeadlessBackend(size: size, script: [])
        let state = AppState(
            size: size, theme: .builtInDefault, panels: AppState.standardPanels(), workspaceName: "w.sqlite",
            catalog: executor.catalog, themeNames: session.themes.availableThemes())
        let runtime = AppRuntime(
            state: state, backend: backend,
            environment: try TestEnvironment.appEnvironment(session: session, executor: executor))
        func screen() -> String { backend.lastFrame?.text() ?? "" }
        func send(_ keys: [Key], until done: () -> Bool) {
            backend.enqueue(keys.map { .key($0) })
            AppRuntimeTests.pump(runtime, until: done)
        }
        AppRuntimeTests.pump(runtime) { screen().contains("What is (17 + 25) * 3?") }
        send([.enter]) { screen().contains("generated tokens") }
        send([.character("T")]) { screen().contains("token #0 ·") }
        send([.character("a")]) { screen().contains("attention · token #0") }
        let attention = screen()
        #expect(attention.contains("L\(best.layer) H\(best.head) · reads KV head \(best.head / 3)"), "\(attention)")
        #expect(attention.contains("what position \(context.count - 1) read to choose"))
        #expect(attention.contains("\(key) \"") && attention.contains(String(format: "%.3f", row[key])), "\(attention)")
        // `a` again closes it; `l` opens the lens.
        send([.character("a")]) { !screen().contains("attention · token #0") }
        send([.character("l")]) { screen().contains("logit lens · token #0") }
        let lens = screen()
        let recorded = try #require(try TraceTokenForkTests.tokens(file, trace: trace, span: span).first)
        let p = exp(recorded["logprob"]?.number ?? 0)
        #expect(lens.contains("recorded p " + String(format: p >= 0.001 ? "%.3f" : "%.1e", p)), "\(lens)")
        #expect(lens.contains("layer top"))
        send([.escape]) { !screen().contains("logit lens") }
        #expect(screen().contains("token #0 ·"), "esc closes the lens, not the token view")
    }
}
