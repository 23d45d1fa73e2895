import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

/// `loupe serve --openai-port` on the real SmolLM2-135M-Instruct, driven by the official `openai`
/// Python client (scripts/python-peers.txt): scripts/reference/openai_client.py makes chat,
/// completions, streaming, logprobs, seeded, stopped, n = 2 and abandoned requests and the
/// errors a client can cause, and reports what the client parsed. Greedy answers are checked
/// against `loupe generate`'s, and every request against the traces stored in the workspace.
@Suite(.serialized) struct OpenAIPeerTests {
    typealias CommandTestFailure = OTLPPeerTests.CommandTestFailure
    static let model = "SmolLM2-135M-Instruct"

    /// `loupe generate`'s greedy answer to `prompt` (`--raw`: no chat template).
    static func generated(_ prompt: String, maxTokens: Int, raw: Bool = false) throws -> String {
        try answer(prompt, maxTokens: maxTokens, raw: raw).text
    }

    /// `loupe generate`'s greedy answer and the finish reason OpenAI's API gives for how it ended:
    /// "length" at the token limit, "stop" otherwise. Where a q8 answer ends moves with the CPU's
    /// kernels (OpenBLAS picks them per CPU), so the server is held to what generate does here.
    static func answer(_ prompt: String, maxTokens: Int, raw: Bool = false) throws -> (
        text: String, finishReason: String
    ) {
        let run = try TestEnvironment.run(
            ["generate", prompt, "--max-tokens", String(maxTokens), "--json"] + (raw ? ["--raw"] : [])
                + ["--workspace", TestEnvironment.temporaryDirectory() + "/w.sqlite"],
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
        guard run.status == 0 else { throw CommandTestFailure("loupe generate failed: \(run.error)") }
        let json = try JSONValue.parse(run.output)
        let stop = try #require(json["stop_reason"]?.string)
        return (try #require(json["text"]?.string), stop == "limit" ? "length" : "stop")
    }

    /// Under both schedulers: continuous batching (`--openai-batch 16`) and one sequence at a
    /// time (`--openai-batch 1`); batching is the default.
    @Test(arguments: [16, 1]) func theOpenAIClientGetsTheLocalModelsAnswersAndEachIsATrace(batch: Int) throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        try Self.withServer(
            ["--openai-queue", "2", "--openai-batch", String(batch)], workspace: workspace
        ) { server, baseURL in

            let report = try Self.peer("openai_client.py", [baseURL, Self.model])

            #expect(report["models"] == .array([.string(Self.model)]))
            // Greedy answers are `loupe generate`'s, through the chat template and without it.
            let (greedy, finish) = try Self.answer("Name three colors.", maxTokens: 24)
            #expect(report["chat"]?["text"]?.string == greedy)
            #expect(report["chat"]?["finish_reason"] == .string(finish))
            #expect(report["chat"]?["usage"]?["prompt_tokens"]?.int == 34)
            let completion = try Self.generated("The capital of France is", maxTokens: 12, raw: true)
            #expect(report["completion"]?["text"]?.string == completion)
            #expect(report["completion"]?["finish_reason"] == "length")
            #expect(report["completion"]?["tokens"]?.array?.count == 12)
            #expect(report["completion"]?["tokens"]?.array?.compactMap(\.string).joined() == completion)
            // Streaming gives the same text, one finish reason, and the usage in a last chunk of no choices.
            #expect(report["stream"]?["text"]?.string == greedy)
            #expect(report["stream"]?["finish_reasons"] == .array([.string(finish)]))
            #expect(report["stream"]?["last_usage"] == report["chat"]?["usage"])
            #expect(report["stream"]?["last_choices"]?.int == 0)
            // Log-probabilities: greedy picks the most likely token, which leads its three alternatives.
            let tokens = try #require(report["logprobs"]?.array)
            #expect(tokens.count == 8)
            for token in tokens {
                let top = try #require(token["top"]?.array)
                #expect(top.count == 3)
                #expect(top.first?["token"] == token["token"])
                #expect(top.first?["logprob"] == token["logprob"])
                #expect((token["logprob"]?.number ?? 1) <= 0)
                let bytes = token["bytes"]?.array?.compactMap { $0.int.map { UInt8($0) } } ?? []
                #expect(String(decoding: bytes, as: UTF8.self) == token["token"]?.string)
            }
            #expect(greedy.hasPrefix(tokens.compactMap { $0["token"]?.string }.joined()))
            // A seed repeats its answer; another seed gives another.
            #expect(report["seeds"]?["7"] == report["seeds"]?["7_again"])
            #expect(report["seeds"]?["7"] != report["seeds"]?["8"])
            // A stop string cuts the greedy answer where it first appears.
            let word = try #require(report["stop"]?["word"]?.string)
            let before = try #require(greedy.range(of: word)).lowerBound
            #expect(report["stop"]?["text"]?.string == String(greedy[..<before]))
            #expect(report["stop"]?["finish_reason"] == "stop")
            #expect(report["n"]?.array?.count == 2)
            // response_format: an answer that ended on its own is a JSON object, and keeps to the schema.
            let json = try #require(report["json"])
            // SmolLM2 greedy writes an object that never closes (keys repeat), so it ends at the token limit:
            // what it wrote is an object's start, and it parses whenever it ends on its own.
            let object = json["object_text"]?.string ?? ""
            #expect(object.hasPrefix("{"), "\(object)")
            #expect(json["object_finish"] == "stop" || json["object_finish"] == "length")
            if json["object_finish"] == "stop" { #expect(try JSONValue.parse(object).object != nil) }
            #expect(json["schema_finish"] == "stop", "\(json["schema_text"]?.string ?? "")")
            let animal = try JSONValue.parse(json["schema_text"]?.string ?? "")
            #expect(animal.object?.keys.sorted() == ["legs", "name"])
            #expect(animal["legs"]?.int != nil && (animal["name"]?.string?.count ?? 99) <= 20)
            #expect(report["after_abandon"]?.string == greedy)
            // Errors as OpenAI shapes them, which the client raises as its own exceptions.
            let errors = try #require(report["errors"])
            let expected: [(String, String, Int64, String?)] = [
                ("no_messages", "BadRequestError", 400, "messages"),
                ("bad_temperature", "BadRequestError", 400, "temperature"),
                ("unknown_model", "NotFoundError", 404, "model"),
                ("tools", "BadRequestError", 400, "tools"),
                ("top_logprobs_alone", "BadRequestError", 400, "top_logprobs"),
                ("bad_schema", "BadRequestError", 400, "response_format.json_schema.schema"),
                ("queue_full", "RateLimitError", 429, nil),
            ]
            for (name, type, status, param) in expected {
                #expect(errors[name]?["class"]?.string == type, "\(name)")
                #expect(errors[name]?["status"]?.int == status, "\(name)")
                #expect(errors[name]?["param"] == param.map(JSONValue.string) ?? .null, "\(name)")
            }
            #expect(errors["queue_full"]?["retry_after"] == "1")

            // Every answered request is a trace; the abandoned stream's says it was cancelled early.
            #expect(server.stop().status == 0)
            let list = try TestEnvironment.run(["trace", "list", "--json", "--workspace", workspace])
            let traces = try #require(try JSONValue.parse(list.output).array)
            // Twelve answered requests, the abandoned stream and the two streams held open to fill the queue.
            #expect(traces.count == 15)
            let chat = try #require(traces.first { $0["name"]?.string == "chat \(Self.model)" })
            #expect(chat["input_tokens"]?.int == 34)
            #expect(chat["output_tokens"]?.int == report["chat"]?["usage"]?["completion_tokens"]?.int)
            #expect(traces.contains { $0["name"]?.string == "text_completion \(Self.model)" })
            let abandoned = traces.filter { ($0["error_count"]?.int ?? 0) > 0 }
            #expect(abandoned.count == 3, "the abandoned stream and the two closed to free the queue")
            #expect(abandoned.allSatisfy { ($0["output_tokens"]?.int ?? 2000) < 400 })
        }
    }

    /// `serve --steer FEATURE:α` with an SAE trained here on SmolLM2's stream (layer 15): the
    /// official client's greedy answer, decoded by the batched scheduler, is the steered answer
    /// `loupe generate --steer` gives on the contiguous path (and not the plain one), and its
    /// trace names the SAE, the layer and the feature.
    @Test func aSteeredServerAnswersAsGenerateSteersAndItsTraceSaysSo() throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        func run(_ arguments: [String]) throws -> String {
            let result = try TestEnvironment.run(
                ["--workspace", workspace] + arguments, environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
            try #require(result.status == 0, "\(arguments): \(result.error)")
            return result.output
        }
        let corpus = TestEnvironment.repositoryRoot.appendingPathComponent("sample-data/cranfield/corpus.jsonl").path
        _ = try run(["ingest", corpus, "--no-embed"])
        _ = try run(["sae", "collect", "--model", "smollm2", "--layer", "15", "--tokens", "600"])
        _ = try run([
            "sae", "train", "--model", "smollm2", "--layer", "15", "--width", "64", "--k", "8", "--steps", "10",
            "--batch", "64", "--fidelity-tokens", "60",
        ])
        let prompt = "Name three colors."
        let generated = try JSONValue.parse(
            try run(["generate", prompt, "--steer", "3:60", "--max-tokens", "16", "--json"]))
        let steered = try #require(generated["steered"]?["text"]?.string)
        try #require(steered != generated["plain"]?["text"]?.string, "feature 3 at α = 60 changes the answer")
        try Self.withServer(["--steer", "3:60"], workspace: workspace) { server, baseURL in
            let report = try Self.peer("openai_steered.py", [baseURL, Self.model, prompt, "16"])
            #expect(report["text"]?.string == steered)
            #expect(server.stop().status == 0)
        }
        let list = try #require(try JSONValue.parse(try run(["trace", "list", "--json"])).array)
        let chat = try #require(list.first { $0["name"]?.string == "chat \(Self.model)" }?["id"]?.int)
        let span = try TraceService(workspace: try Workspace(path: workspace)).trace(chat).spans[0]
        #expect(span.attributes["loupe.steering.layer"] == .number(15))
        #expect(span.attributes["loupe.steering.steer"] == .array(["3:60.0"]))
        #expect(span.attributes["loupe.steering.sae"]?.number != nil)
    }

    /// Runs `body` with `loupe serve` and its OpenAI endpoint on a free port over a new
    /// workspace, and the endpoint's base URL (`http://127.0.0.1:PORT/v1`); the server is
    /// stopped when `body` ends, however it ends (``LoupeServer/with(_:environment:errors:_:)``).
    static func withServer<Result>(
        _ extra: [String], workspace: String, _ body: (LoupeServer, String) throws -> Result
    ) throws -> Result {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        try #require(
            FileManager.default.isExecutableFile(atPath: OTLPPeerTests.python),
            "the Python peers are missing: run scripts/python-peers first")
        return try LoupeServer.with(
            ["serve", "--workspace", workspace, "--http-port", "0", "--grpc-port", "0", "--openai-port", "0"] + extra,
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot]
        ) { server in
            try body(server, try server.address(/OpenAI (http:\/\/127\.0\.0\.1:[0-9]+\/v1)/))
        }
    }

    /// Runs `scripts/reference/NAME` with the Python peers and `arguments`; its stdout as JSON.
    static func peer(_ name: String, _ arguments: [String]) throws -> JSONValue {
        try PythonPeer.report(name, arguments)
    }

    /// Tools through the official client (scripts/reference/openai_tools.py): under `required`, a
    /// named choice and `auto`, every call names an offered tool and its arguments keep to that
    /// tool's schema (checked by `jsonschema`, not by Loupe); `none` answers in text; the streamed
    /// calls, joined as the client joins deltas, are the non-streamed ones; a tool message carries
    /// the conversation on; and each request, calls included, is a trace.
    @Test func theOpenAIClientCallsToolsThatTheGrammarKeepsValid() throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        try Self.withServer([], workspace: workspace) { server, baseURL in
            let report = try Self.peer("openai_tools.py", [baseURL, Self.model])

            for name in ["required", "named"] {
                let answer = try #require(report[name], "\(name)")
                #expect(answer["finish_reason"] == "tool_calls", "\(name): \(answer.compactJSON)")
                #expect(answer["content"] == .null, "\(name)")
                let calls = try #require(answer["calls"]?.array)
                #expect(!calls.isEmpty, "\(name)")
                for call in calls {
                    #expect(call["valid"]?.bool == true, "\(name): \(call.compactJSON)")
                    #expect(call["type"] == "function")
                    #expect(call["id"]?.string?.hasPrefix("call_") == true)
                }
                #expect(Set(calls.compactMap { $0["id"]?.string }).count == calls.count, "ids are unique")
            }
            #expect(
                report["required"]?["calls"]?.array?.allSatisfy {
                    ["calculator", "get_weather"].contains($0["name"]?.string ?? "")
                } == true)
            #expect(report["named"]?["calls"]?.array?.allSatisfy { $0["name"] == "get_weather" } == true)
            // `none`: tools are not offered, so the reply is text.
            #expect(report["none"]?["calls"]?.array?.isEmpty == true)
            #expect(report["none"]?["content"]?.string?.isEmpty == false)
            #expect(report["none"]?["finish_reason"] == "stop" || report["none"]?["finish_reason"] == "length")
            // `auto`: text, or calls that are all valid.
            let auto = try #require(report["auto"])
            if auto["finish_reason"] == "tool_calls" {
                #expect(auto["calls"]?.array?.allSatisfy { $0["valid"]?.bool == true } == true, "\(auto.compactJSON)")
            } else {
                #expect(auto["calls"]?.array?.isEmpty == true && auto["content"]?.string != nil, "\(auto.compactJSON)")
            }
            // Streamed: the same calls (arguments parse to the same objects), ids sent once, one finish reason.
            let streamed = try #require(report["stream"]?["calls"]?.array)
            let whole = try #require(report["required"]?["calls"]?.array)
            #expect(streamed.count == whole.count)
            for (piece, call) in zip(streamed, whole) {
                #expect(piece["name"] == call["name"])
                #expect(piece["id"]?.string?.hasPrefix("call_") == true)
                #expect(
                    try JSONValue.parse(piece["arguments"]?.string ?? "")
                        == JSONValue.parse(call["arguments"]?.string ?? ""))
                #expect((piece["pieces"]?.int ?? 0) >= 1)
            }
            #expect(report["stream"]?["finish_reasons"] == .array(["tool_calls"]))
            // A call cut by max_tokens inside its arguments, as OpenAI answers one: `length`, and the
            // call begun with its arguments as far as written, the same streamed or not; the client
            // sees arguments that do not parse.
            let cut = try #require(report["cut"])
            let cutStream = try #require(
                cut["stream"], "no limit cut the call inside its arguments: \(cut.compactJSON)")
            #expect(cutStream["finish_reasons"] == .array(["length"]), "\(cut.compactJSON)")
            let cutCall = try #require(cutStream["calls"]?.array?.first)
            #expect(cutCall["name"] == "get_weather" && cutCall["id"]?.string?.hasPrefix("call_") == true)
            let cutAnswer = try #require(cut["answer"])
            #expect(cutAnswer["finish_reason"] == "length" && cutAnswer["content"] == .null, "\(cutAnswer.compactJSON)")
            let cutWhole = try #require(cutAnswer["calls"]?.array?.first)
            #expect(cutWhole["name"] == "get_weather" && cutWhole["valid"]?.bool == false)
            #expect(cutWhole["arguments"] == cutCall["arguments"], "streamed and not, the same partial arguments")
            #expect(cutWhole["arguments"]?.string?.hasPrefix("{") == true)
            // The tool's answer continues the conversation, the calls and the result in the prompt: a
            // text reply, or more calls that are valid too.
            let continued = try #require(report["continued"])
            if continued["finish_reason"] == "tool_calls" {
                #expect(continued["calls"]?.array?.allSatisfy { $0["valid"]?.bool == true } == true)
            } else {
                #expect(continued["content"]?.string?.isEmpty == false, "\(continued.compactJSON)")
            }
            #expect((continued["prompt_tokens"]?.int ?? 0) > (continued["first_prompt_tokens"]?.int ?? .max))
            let errors = try #require(report["errors"])
            let expected: [(String, String?)] = [
                ("unanswered_tool", "messages[1].tool_call_id"), ("unknown_choice", "tool_choice.function.name"),
                ("choice_without_tools", "tool_choice"), ("with_response_format", "response_format"),
                ("bad_name", "tools[0].function.name"),
            ]
            for (name, param) in expected {
                #expect(errors[name]?["status"]?.int == 400, "\(name)")
                #expect(errors[name]?["param"] == param.map(JSONValue.string) ?? .null, "\(name)")
            }

            #expect(server.stop().status == 0)
            let list = try TestEnvironment.run(["trace", "list", "--json", "--workspace", workspace])
            let traces = try #require(try JSONValue.parse(list.output).array)
            // Four answers, the stream, the cut calls and the continued conversation; refused requests leave none.
            #expect(traces.count == 6 + Int(cut["requests"]?.int ?? 0))
        }
    }

    /// A non-streaming client that closes its connection mid-answer cancels its request
    /// (scripts/reference/openai_disconnect.py, a raw socket): with one slot in all
    /// (`--openai-queue 1`) the next request is answered, not refused, and `/metrics`, parsed by
    /// prometheus_client, counts it as 499. Every figure /metrics shows is checked against the
    /// traces the server stored: tokens in and out, one first token per answer, one gap per later
    /// token, and the batched scheduler's key/value blocks while an answer grows and after.
    @Test func aClientThatLeavesMidAnswerCancelsItAndMetricsCountIt() throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        try Self.withServer(
            ["--openai-queue", "1", "--openai-batch", "16"], workspace: workspace
        ) { server, baseURL in
            let report = try Self.peer("openai_disconnect.py", [baseURL, Self.model])
            #expect(report["scrapes_until_running"]?.int != nil, "the abandoned request never showed in the queue")
            #expect(report["scrapes_until_cancelled"]?.int != nil, "the abandoned request was never counted as 499")
            // Answered, not refused: the greedy answer to "Name three colors." may run to its 24 tokens.
            #expect(report["next"]?["finish_reason"] == "stop" || report["next"]?["finish_reason"] == "length")
            #expect((report["next"]?["usage"]?["completion_tokens"]?.int ?? 0) > 0)
            #expect(report["bad_status"]?.int == 400)
            #expect(report["content_type"]?.string?.hasPrefix("text/plain; version=0.0.4") == true)
            let samples = try #require(report["samples"]?.array)
            func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
                samples.first { sample in
                    sample["name"]?.string == name
                        && labels.allSatisfy { sample["labels"]?[$0.key]?.string == $0.value }
                }?["value"]?.number
            }
            #expect(value("loupe_serve_requests_total", ["status": "200"]) == 1)
            #expect(value("loupe_serve_requests_total", ["status": "499"]) == 1)
            #expect(value("loupe_serve_requests_total", ["status": "400"]) == 1)
            #expect(value("loupe_serve_queue_depth") == 0)
            #expect(report["types"]?["loupe_serve_time_to_first_token_seconds"] == "histogram")
            #expect(report["types"]?["loupe_serve_inter_token_latency_seconds"] == "histogram")
            let infinite = samples.first {
                $0["name"] == "loupe_serve_inter_token_latency_seconds_bucket" && $0["labels"]?["le"] == "+Inf"
            }
            #expect(infinite?["value"]?.number == value("loupe_serve_inter_token_latency_seconds_count"))
            // The paged cache's blocks: 16 sequences × 1,024 tokens in blocks of 16 rows; while the
            // abandoned answer grew it held some (its prompt and the tokens so far), and once every
            // request has ended none.
            let loaded = try #require(report["kv_under_load"], "no scrape saw key/value blocks in use")
            #expect(loaded["total"]?.number == 1024 && value("loupe_serve_kv_blocks") == 1024)
            #expect(
                (loaded["in_use"]?.number ?? 0) >= 2 && (loaded["in_use"]?.number ?? 0) < 1024, "\(loaded.compactJSON)")
            #expect(value("loupe_serve_kv_blocks_in_use") == 0)

            server.stop()
            let list = try TestEnvironment.run(["trace", "list", "--json", "--workspace", workspace])
            let traces = try #require(try JSONValue.parse(list.output).array)
            #expect(traces.count == 2, "the abandoned request and the next; the 400 leaves no trace")
            let abandoned = try #require(traces.first { ($0["error_count"]?.int ?? 0) > 0 })
            #expect((abandoned["output_tokens"]?.int ?? 2000) < 2000, "the abandoned answer ran to its limit")
            let generated = traces.compactMap { $0["output_tokens"]?.int }.reduce(0, +)
            let prompts = traces.compactMap { $0["input_tokens"]?.int }.reduce(0, +)
            #expect(value("loupe_serve_generated_tokens_total") == Double(generated))
            #expect(value("loupe_serve_prompt_tokens_total") == Double(prompts))
            let answered = traces.filter { ($0["output_tokens"]?.int ?? 0) > 0 }.count
            #expect(value("loupe_serve_time_to_first_token_seconds_count") == Double(answered))
            #expect(value("loupe_serve_inter_token_latency_seconds_count") == Double(generated) - Double(answered))
        }
    }

    /// A client that sends its headers and then trickles the body (scripts/reference/openai_slow_body.py)
    /// is answered 408 once the body deadline passes, not waited on; the next request is then served,
    /// so the slow one held no model slot (`--openai-queue 1`: one slot in all).
    @Test(arguments: [16, 1]) func aClientThatTricklesItsBodyIsCutOffAndHoldsNoSlot(batch: Int) throws {
        try Self.withServer(
            ["--openai-queue", "1", "--openai-batch", String(batch)],
            workspace: TestEnvironment.temporaryDirectory() + "/w.sqlite"
        ) { server, baseURL in
            let report = try Self.peer("openai_slow_body.py", [baseURL, Self.model])
            #expect(report["slow_status"]?.string == "HTTP/1.1 408 Request Timeout")
            #expect(report["slow_body"]?.string?.contains("the body did not arrive within 30 s") == true)
            #expect((report["trickled"]?.int ?? 0) > 0, "the client sent part of its body before the answer")
            #expect(report["next_status"]?.int == 200)
            #expect(report["next_choices"]?.int == 1)
        }
    }
}
