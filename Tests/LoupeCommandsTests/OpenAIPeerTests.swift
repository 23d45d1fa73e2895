import Foundation
import LoupeBase
import Testing

#if canImport(Glibc)
    import Glibc
#endif

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
        let run = try TestEnvironment.run(
            ["generate", prompt, "--max-tokens", String(maxTokens), "--json"] + (raw ? ["--raw"] : [])
                + ["--workspace", TestEnvironment.temporaryDirectory() + "/w.sqlite"],
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
        guard run.status == 0 else { throw CommandTestFailure("loupe generate failed: \(run.error)") }
        return try #require(try JSONValue.parse(run.output)["text"]?.string)
    }

    @Test func theOpenAIClientGetsTheLocalModelsAnswersAndEachIsATrace() throws {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        let python = OTLPPeerTests.python
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the Python peers are missing: run scripts/python-peers first")
        let directory = TestEnvironment.temporaryDirectory()
        let workspace = directory + "/w.sqlite"
        let server = Process()
        server.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
        server.arguments = [
            "serve", "--workspace", workspace, "--http-port", "0", "--grpc-port", "0", "--openai-port", "0",
            "--openai-queue", "2",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["LOUPE_MODELS"] = ModelsCommandTests.modelsRoot
        server.environment = environment
        let output = Pipe()
        server.standardOutput = output
        server.standardError = output
        try server.run()
        defer {
            if server.isRunning {
                kill(server.processIdentifier, SIGKILL)
                server.waitUntilExit()
            }
        }
        let text = TestEnvironment.firstLine(of: output)
        let baseURL = try #require(
            text.firstRange(of: /OpenAI http:\/\/127\.0\.0\.1:[0-9]+\/v1/).map { String(text[$0].dropFirst(7)) },
            "loupe serve did not say where the OpenAI endpoint listens: \(text)")

        let client = Process()
        client.executableURL = URL(fileURLWithPath: python)
        client.arguments = [
            TestEnvironment.repositoryRoot.appendingPathComponent("scripts/reference/openai_client.py").path, baseURL,
            Self.model,
        ]
        let clientOutput = Pipe()
        let clientError = Pipe()
        client.standardOutput = clientOutput
        client.standardError = clientError
        try client.run()
        let out = clientOutput.fileHandleForReading.readDataToEndOfFile()
        let err = clientError.fileHandleForReading.readDataToEndOfFile()
        client.waitUntilExit()
        try #require(
            client.terminationStatus == 0,
            "openai_client.py failed: \(String(decoding: err, as: UTF8.self).suffix(3000))")
        let report = try JSONValue.parse(out)

        #expect(report["models"] == .array([.string(Self.model)]))
        // Greedy answers are `loupe generate`'s, through the chat template and without it.
        let greedy = try Self.generated("Name three colors.", maxTokens: 24)
        #expect(report["chat"]?["text"]?.string == greedy)
        #expect(report["chat"]?["finish_reason"] == "stop")
        #expect(report["chat"]?["usage"]?["prompt_tokens"]?.int == 34)
        let completion = try Self.generated("The capital of France is", maxTokens: 12, raw: true)
        #expect(report["completion"]?["text"]?.string == completion)
        #expect(report["completion"]?["finish_reason"] == "length")
        #expect(report["completion"]?["tokens"]?.array?.count == 12)
        #expect(report["completion"]?["tokens"]?.array?.compactMap(\.string).joined() == completion)
        // Streaming gives the same text, one finish reason, and the usage in a last chunk of no choices.
        #expect(report["stream"]?["text"]?.string == greedy)
        #expect(report["stream"]?["finish_reasons"] == .array(["stop"]))
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
        kill(server.processIdentifier, SIGTERM)
        _ = output.fileHandleForReading.readDataToEndOfFile()
        server.waitUntilExit()
        #expect(server.terminationStatus == 0)
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

    /// A client that sends its headers and then trickles the body (scripts/reference/openai_slow_body.py)
    /// is answered 408 once the body deadline passes, not waited on; the next request is then served,
    /// so the slow one held no model slot (`--openai-queue 1`: one slot in all).
    @Test func aClientThatTricklesItsBodyIsCutOffAndHoldsNoSlot() throws {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        let python = OTLPPeerTests.python
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the Python peers are missing: run scripts/python-peers first")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
        server.arguments = [
            "serve", "--workspace", TestEnvironment.temporaryDirectory() + "/w.sqlite", "--http-port", "0",
            "--grpc-port", "0", "--openai-port", "0", "--openai-queue", "1",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["LOUPE_MODELS"] = ModelsCommandTests.modelsRoot
        server.environment = environment
        let output = Pipe()
        server.standardOutput = output
        server.standardError = output
        try server.run()
        defer {
            if server.isRunning {
                kill(server.processIdentifier, SIGKILL)
                server.waitUntilExit()
            }
        }
        let text = TestEnvironment.firstLine(of: output)
        let baseURL = try #require(
            text.firstRange(of: /OpenAI http:\/\/127\.0\.0\.1:[0-9]+\/v1/).map { String(text[$0].dropFirst(7)) },
            "loupe serve did not say where the OpenAI endpoint listens: \(text)")
        let client = Process()
        client.executableURL = URL(fileURLWithPath: python)
        client.arguments = [
            TestEnvironment.repositoryRoot.appendingPathComponent("scripts/reference/openai_slow_body.py").path,
            baseURL, Self.model,
        ]
        let clientOutput = Pipe()
        let clientError = Pipe()
        client.standardOutput = clientOutput
        client.standardError = clientError
        try client.run()
        let out = clientOutput.fileHandleForReading.readDataToEndOfFile()
        let err = clientError.fileHandleForReading.readDataToEndOfFile()
        client.waitUntilExit()
        try #require(
            client.terminationStatus == 0,
            "openai_slow_body.py failed: \(String(decoding: err, as: UTF8.self).suffix(3000))")
        let report = try JSONValue.parse(out)
        #expect(report["slow_status"]?.string == "HTTP/1.1 408 Request Timeout")
        #expect(report["slow_body"]?.string?.contains("the body did not arrive within 30 s") == true)
        #expect((report["trickled"]?.int ?? 0) > 0, "the client sent part of its body before the answer")
        #expect(report["next_status"]?.int == 200)
        #expect(report["next_choices"]?.int == 1)
    }
}
