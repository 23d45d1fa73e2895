import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeStore
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A real agent framework pointed at Loupe twice at once: the OpenAI Agents SDK
/// (scripts/reference/agents_sdk_on_loupe.py) takes SmolLM2 on `loupe serve`'s OpenAI endpoint as
/// its model and exports its own spans, through OpenInference's processor, to the same server's
/// OTLP receiver. The SDK's spans and the endpoint's record of each model call land in one trace:
/// the client carries W3C `traceparent` and the endpoint files each request under the SDK's
/// generation span that made it.
@Suite(.serialized) struct AgentsSDKOnLoupeTests {
    @Test func theAgentsSDKsSpansAndTheEndpointsRequestsMeetInOneTrace() async throws {
        try #require(
            FileManager.default.fileExists(atPath: ModelsCommandTests.smolLM2Path),
            "SmolLM2 weights not found at \(ModelsCommandTests.smolLM2Path): run scripts/fetch-smollm2")
        try #require(
            FileManager.default.isExecutableFile(atPath: OTLPPeerTests.python),
            "the Python peers are missing: run scripts/python-peers first")
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let server = try LoupeServer(
            ["serve", "--workspace", workspace, "--http-port", "0", "--no-grpc", "--openai-port", "0"],
            environment: ["LOUPE_MODELS": ModelsCommandTests.modelsRoot])
        let otlp = try server.address(/OTLP\/HTTP (http:\/\/127\.0\.0\.1:[0-9]+\/v1\/traces)/)
        let baseURL = try server.address(/OpenAI (http:\/\/127\.0\.0\.1:[0-9]+\/v1)/)

        let report = try OpenAIPeerTests.peer("agents_sdk_on_loupe.py", [baseURL, OpenAIPeerTests.model, otlp])
        #expect(report["failed"]?.int == 0)
        let requests = try #require(report["requests"]?.array)
        let spans = try #require(report["spans"]?.array)
        // The first call must call `add`; the run ends with an answer or at three turns.
        #expect((1...3).contains(requests.count), "\(report.compactJSON)")
        #expect(spans.contains { $0["kind"] == "TOOL" && $0["name"] == "add" }, "\(report.compactJSON)")
        // What is true of the SDK: it sends no traceparent of its own; the script's hook adds the
        // open SDK span's, which is the generation span of that call.
        #expect(requests.allSatisfy { $0["sdk_sent_traceparent"]?.bool == false })
        let generations = spans.filter { $0["kind"] == "LLM" }
        #expect(generations.count == requests.count)
        let roots = spans.filter { $0["parent_id"] == .null }
        #expect(roots.count == 1)
        let traceID = try #require(roots.first?["trace_id"]?.string)
        var callers: [String] = []
        for request in requests {
            let header = try #require(request["traceparent"]?.string)
            let fields = header.split(separator: "-").map(String.init)
            #expect(fields.count == 4 && fields[1] == traceID, "\(header)")
            callers.append(fields[2])
        }
        #expect(Set(callers) == Set(generations.compactMap { $0["span_id"]?.string }))
        // A traceparent that does not parse (version ff is invalid) is ignored: a trace of its own.
        var request = URLRequest(url: try #require(URL(string: baseURL + "/chat/completions")))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("ff-\(traceID)-\(callers[0])-01", forHTTPHeaderField: "traceparent")
        request.httpBody = Data(
            #"{"model": "\#(OpenAIPeerTests.model)", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2}"#
                .utf8)
        let (_, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)

        #expect(server.stop().status == 0)
        // One trace holds both sides: every span the SDK exported and one span per request.
        let stored = try Workspace(path: workspace)
        let summaries = try stored.traces.traceSummaries()
        #expect(summaries.count == 2, "\(summaries.map(\.name))")
        let summary = try #require(summaries.first { $0.externalID == traceID })
        let alone = try #require(summaries.first { $0.externalID != traceID })
        #expect(alone.spanCount == 1 && alone.awaitingParents == 0)
        #expect(summary.spanCount == spans.count + requests.count)
        #expect(summary.name == "Adder on Loupe")
        #expect(summary.models == [OpenAIPeerTests.model])
        let trace = try TraceService(workspace: stored).trace(summary.id)
        let served = trace.spans.filter { $0.name == "chat \(OpenAIPeerTests.model)" }
        #expect(served.count == requests.count)
        // Each request's span hangs under the generation span that sent it, and keeps what only the
        // server knows: the prompt's tokens, each generated token's log-probability.
        #expect(Set(served.compactMap(\.parentID)) == Set(callers))
        for span in served {
            #expect(span.kind == .llm)
            #expect((span.usage.inputTokens ?? 0) > 0 && (span.usage.outputTokens ?? 0) > 0)
            let tokens = try GeneratedTokens.decode(span.attributes, span: span.name)
            #expect(tokens.map(\.tokens.count) == [span.usage.outputTokens ?? -1])
            #expect(tokens.first?.tokens.allSatisfy { $0.logprob <= 0 } == true)
            #expect(span.attributes["gen_ai.server.time_to_first_token"]?.number != nil)
        }
        // Each model call counts once, as the server counted it. The SDK's generation span carries
        // the usage it read from the response too; the trace's totals are the server spans' alone,
        // and the generation spans are no steps of their own (NestedModelCalls).
        let generationSpans = trace.spans.filter { callers.contains($0.spanID) }
        #expect(generationSpans.count == requests.count)
        #expect(
            generationSpans.contains { $0.usage.inputTokens != nil }, "the SDK's spans carry no usage to count twice")
        #expect(summary.inputTokens == served.reduce(0) { $0 + ($1.usage.inputTokens ?? 0) })
        #expect(summary.outputTokens == served.reduce(0) { $0 + ($1.usage.outputTokens ?? 0) })
        #expect(summary.stepCount == trace.steps.count)
        #expect(trace.steps.allSatisfy { !callers.contains(trace.spans[$0].spanID) })
        #expect(Set(served.map(\.spanID)).isSubset(of: trace.steps.map { trace.spans[$0].spanID }))
        let usage = try stored.traces.modelUsage().filter { $0.trace == summary.id }
        #expect(usage.reduce(0) { $0 + $1.calls } == requests.count)
        #expect(usage.reduce(0) { $0 + ($1.inputTokens ?? 0) } == summary.inputTokens)
        // The tree holds together: every span but the root has its parent in the trace.
        let ids = Set(trace.spans.map(\.spanID))
        #expect(trace.spans.filter { $0.parentID.map { !ids.contains($0) } ?? true }.count == 1)
        #expect(summary.awaitingParents == 0)
    }
}
