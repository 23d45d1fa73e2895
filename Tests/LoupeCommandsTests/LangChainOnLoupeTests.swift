import Foundation
import LoupeBase
import Testing

/// LangChain's OpenAI chat model (`langchain_openai.ChatOpenAI`, scripts/python-peers.txt) with its
/// `base_url` on `loupe serve --openai-port` (scripts/reference/langchain_on_loupe.py): a greedy
/// chat answer that is `loupe generate`'s, the same answer streamed, log-probabilities, and a tool
/// call through `bind_tools` whose arguments keep to the tool's schema (checked by `jsonschema`);
/// each request is stored as a trace whose token counts are the usage LangChain read.
@Suite(.serialized) struct LangChainOnLoupeTests {
    @Test func langChainsChatOpenAIGetsAnswersAndToolCallsAndEachIsATrace() throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        try OpenAIPeerTests.withServer([], workspace: workspace) { server, baseURL in
            let report = try OpenAIPeerTests.peer("langchain_on_loupe.py", [baseURL, OpenAIPeerTests.model])

            let (greedy, finish) = try OpenAIPeerTests.answer("Name three colors.", maxTokens: 24)
            let chat = try #require(report["chat"])
            #expect(chat["text"]?.string == greedy)
            #expect(chat["finish_reason"] == .string(finish))
            #expect(chat["model_name"] == .string(OpenAIPeerTests.model))
            #expect(chat["usage"]?["input_tokens"]?.int == 34)
            #expect(report["stream"]?["text"]?.string == greedy)
            // Greedy picks the most likely token, which leads the alternatives LangChain passes on.
            let logprobs = try #require(report["logprobs"]?.array)
            #expect(logprobs.count == 4)
            for token in logprobs {
                #expect(token["top"]?.array?.first == token["token"], "\(token.compactJSON)")
                #expect((token["logprob"]?.number ?? 1) <= 0)
            }
            #expect(greedy.hasPrefix(logprobs.compactMap { $0["token"]?.string }.joined()))

            let tool = try #require(report["tool"])
            #expect(tool["finish_reason"] == "tool_calls", "\(tool.compactJSON)")
            #expect(tool["invalid_calls"]?.int == 0)
            let calls = try #require(tool["calls"]?.array)
            #expect(!calls.isEmpty)
            for call in calls {
                #expect(call["name"] == "get_weather")
                #expect(call["errors"]?.array?.isEmpty == true, "\(call.compactJSON)")
                #expect(call["id"]?.string?.hasPrefix("call_") == true)
            }

            #expect(server.stop().status == 0)
            let list = try TestEnvironment.run(["trace", "list", "--json", "--workspace", workspace])
            let traces = try #require(try JSONValue.parse(list.output).array)
            #expect(Int64(traces.count) == report["requests"]?.int)
            #expect(traces.allSatisfy { $0["name"]?.string == "chat \(OpenAIPeerTests.model)" })
            // The tool call's request, by the usage LangChain read for it.
            let usage = try #require(tool["usage"])
            #expect(
                traces.contains {
                    $0["input_tokens"] == usage["input_tokens"] && $0["output_tokens"] == usage["output_tokens"]
                }, "\(usage.compactJSON)")
        }
    }
}
