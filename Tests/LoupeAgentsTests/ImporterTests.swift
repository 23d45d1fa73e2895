import Foundation
import LoupeAgents
import LoupeBase
import Testing

/// The importers on files the real tools wrote (scripts/fixtures/): the OpenTelemetry SDK's
/// OTLP/JSON file exporter and the openai SDK's message types.
@Suite struct ImporterTests {
    static func sample(_ name: String) throws -> (Data, String) {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../sample-data/traces/\(name)"
        ).standardized.path
        return (try Data(contentsOf: URL(fileURLWithPath: path)), path)
    }

    /// What the OpenAI Agents SDK's own exporter sent (scripts/fixtures/openai_agents.py): a
    /// handoff run with a guardrail, a tool call and three model calls, and a run the guardrail
    /// stopped; both in the thread the SDK's group_id names.
    @Test func openAIAgentsSDKExportBecomesTracesWithSessions() throws {
        let (data, file) = try Self.sample("openai-agents.json")
        #expect(TraceImport.detect(data, file: file) == .openaiAgents)
        let traces = try TraceImport.traces(data, file: file)
        #expect(traces.map(\.name) == ["Support desk", "Support desk"])
        #expect(traces.map(\.sessionID) == ["thread-42", "thread-42"])
        let run = traces[0]
        #expect(run.metadata["metadata"]?["customer"] == .string("c-7"))
        #expect(
            run.spans.map(\.name) == [
                "task", "Triage agent", "turn", "guardrail no_passwords", "generation gpt-4o-mini",
                "handoff Triage agent → Weather agent", "Weather agent", "turn", "generation gpt-4o-mini",
                "get_weather", "turn", "generation gpt-4o-mini",
            ])
        let calls = run.spans.filter { $0.kind == .llm }
        #expect(calls.map(\.usage.inputTokens) == [88, 120, 151])
        #expect(calls[0].input.map(\.role) == ["system", "user"])
        #expect(calls[0].output.first?.toolCalls.first?.name == "transfer_to_weather_agent")
        #expect(calls[2].output.first?.text == "It is sunny, 19 °C in Lyon right now.")
        let tool = try #require(run.spans.first { $0.kind == .tool }?.tool)
        #expect(tool.name == "get_weather" && tool.arguments == #"{"city": "Lyon"}"# && tool.result == "sunny, 19 °C")
        #expect(run.errorCount == 0)
        let stopped = traces[1]
        #expect(stopped.errorCount == 2)
        #expect(stopped.spans.first { $0.kind == .eval }?.status == .error("guardrail tripwire triggered"))
        #expect(stopped.spans.contains { $0.status == .error("Guardrail tripwire triggered") })
        // A span with a time that is not one is named with its place.
        let broken = String(decoding: data, as: UTF8.self).replacingOccurrences(
            of: #""started_at": "2026"#, with: #""started_at": "soon"#)
        #expect(throws: TraceImportError.self) { try TraceImport.traces(Data(broken.utf8), file: file) }
    }

    @Test func otlpFileExportBecomesThreeTracesWithParentsFirst() throws {
        let (data, file) = try Self.sample("otlp-genai.jsonl")
        #expect(TraceImport.detect(data, file: file) == .otlp)
        let traces = try TraceImport.traces(data, file: file)
        #expect(traces.count == 3)
        let current = traces[0]
        #expect(current.name == "invoke_agent cranfield-qa")
        #expect(current.metadata["service.name"] == .string("cranfield-qa-agent"))
        // The exporter wrote children first; the model orders parents first, siblings by start.
        #expect(current.spans.map(\.kind) == [.agent, .llm, .tool, .llm, .tool, .llm])
        #expect(current.spans.dropFirst().allSatisfy { $0.parentID == current.spans[0].spanID })
        let chat = current.spans[1]
        #expect(chat.model == "gpt-4o-mini-2024-07-18")
        #expect(chat.usage == Usage(inputTokens: 412, outputTokens: 23, cacheReadTokens: 256))
        #expect(chat.input.map(\.role) == ["system", "user"])
        #expect(chat.output.first?.toolCalls.first?.name == "search")
        #expect(chat.durationNs == 1_168_000_000)
        // Content that became messages is not kept again in the attributes; the raw source has it.
        #expect(chat.attributes["gen_ai.input.messages"] == nil && chat.attributes["gen_ai.request.model"] != nil)
        #expect(chat.raw?.compactJSON.contains("gen_ai.input.messages") == true)
        #expect(current.spans[2].attributes["gen_ai.tool.call.arguments"] == nil)
        let failed = current.spans[4]
        #expect(failed.status == .error("division by zero"))
        #expect(failed.tool?.name == "calculator" && failed.tool?.error == "division by zero")
        #expect(current.errorCount == 1)
        #expect(current.usage.inputTokens == 412 + 498 + 575)
        #expect(
            current.scores == [
                Score(scorer: "cites_sources", value: .number(1), answer: "pass", explanation: "cites 2 chunk ids")
            ])
        // The older generation: per-message events.
        let legacy = traces[1].spans[1]
        #expect(legacy.input.map(\.role) == ["system", "user"])
        #expect(legacy.output.first?.text.hasPrefix("Aerodynamic heating") == true)
        #expect(legacy.usage.inputTokens == 96 && legacy.usage.outputTokens == 52)
        // OpenInference.
        #expect(traces[2].spans.map(\.kind) == [.agent, .retrieval, .llm])
        let llm = traces[2].spans[2]
        #expect(llm.model == "llama-3.1-8b-instruct" && llm.usage.inputTokens == 310)
        #expect(llm.input.map(\.text) == ["Use the context.", "how do swept wings flutter?"])
        #expect(!llm.attributes.keys.contains { $0.hasPrefix("llm.input_messages.") })
    }

    @Test func aMalformedSpanNamesItsLineAndField() throws {
        let (data, file) = try Self.sample("otlp-genai.jsonl")
        var lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        lines[3] = lines[3].replacingOccurrences(of: #""spanId":""#, with: #""spanId":"zz"#)
        #expect(throws: TraceImportError.self) {
            try OTLPImporter.traces(Data(lines.joined(separator: "\n").utf8), file: file)
        }
        do {
            _ = try OTLPImporter.traces(Data(lines.joined(separator: "\n").utf8), file: "x.jsonl")
        } catch {
            #expect(error.description.hasPrefix("x.jsonl:4: resourceSpans[0].scopeSpans[0].spans[0].spanId: \"zz"))
        }
        lines[3] = "{\"resourceSpans\": [oops"
        do {
            _ = try OTLPImporter.traces(Data(lines.joined(separator: "\n").utf8), file: "x.jsonl")
            Issue.record("a broken line was accepted")
        } catch {
            #expect(error.description.hasPrefix("x.jsonl:4: not JSON (line 1, column 20: expected a value)"))
        }
    }

    @Test func chatConversationsKeepBadArgumentsRawAndFlagged() throws {
        let (data, file) = try Self.sample("openai-chat.jsonl")
        #expect(TraceImport.detect(data, file: file) == .openai)
        let traces = try TraceImport.traces(data, file: file)
        #expect(traces.count == 3 && traces.allSatisfy { !$0.timed })
        let first = traces[0]
        #expect(first.spans.map(\.kind) == [.agent, .llm, .tool, .llm])
        #expect(first.spans[2].tool?.result?.hasPrefix("[1] 12#0") == true)
        #expect(first.spans[3].input.count == 4)
        let cut = try #require(traces[1].spans[2].tool)
        #expect(cut.arguments == #"{"expression": "0.5 * 1.4 * 30000 * 2 ** "#)
        #expect(cut.argumentsError?.hasPrefix("arguments are not valid JSON") == true)
        #expect(traces[2].spans[2].tool?.name == "search")
        #expect(traces[0].metadata["tools"]?.array?.count == 2)
    }

    @Test func unknownFilesAreRefusedByName() {
        #expect(throws: TraceImportError.self) { try TraceImport.traces(Data("{\"x\": 1}".utf8), file: "a.json") }
    }
}

/// Inspect AI logs written by inspect-ai itself (scripts/fixtures/inspect_logs.py).
@Suite struct InspectImporterTests {
    /// Inspect's own log of a task run with message and token limits: the first sample is
    /// stopped at the message limit (a span for the `sample_limit` event, the limit on the
    /// root), the second answers within it.
    @Test func limitsAreKeptAndTheOneThatStoppedASampleIsASpan() throws {
        let (data, file) = try ImporterTests.sample("inspect-limits.json")
        let traces = try TraceImport.traces(data, file: file)
        #expect(traces.map(\.name) == ["limits · loop · epoch 1", "limits · mach · epoch 1"])
        for trace in traces {
            #expect(trace.spans[0].attributes["inspect.message_limit"] == .number(4))
            #expect(trace.spans[0].attributes["inspect.token_limit"] == .number(2000))
            #expect(trace.spans[0].attributes["inspect.time_limit"] == nil)
        }
        let stopped = traces[0]
        #expect(stopped.spans[0].attributes["inspect.limit.type"] == "message")
        #expect(stopped.spans[0].attributes["inspect.limit.value"] == .number(4))
        #expect(stopped.spans[0].attributes["inspect.limit.message"] == "Message limit exceeded. count: 5; limit: 4")
        let limit = try #require(stopped.spans.first { $0.name == "message limit reached" })
        #expect(limit.status != .error("") && !limit.status.isError)
        #expect(stopped.spans.filter { $0.kind == .llm }.count == 2)
        #expect(traces[1].spans[0].attributes["inspect.limit.type"] == nil)
        #expect(!traces[1].spans.contains { $0.name.hasSuffix("limit reached") })
    }

    @Test func jsonAndEvalZipsInBothCompressionsReadAlike() throws {
        var runs: [[Trace]] = []
        for name in ["inspect-arith.json", "inspect-arith.eval", "inspect-arith-deflate.eval"] {
            let (data, file) = try ImporterTests.sample(name)
            #expect(TraceImport.detect(data, file: file) == .inspect)
            runs.append(try TraceImport.traces(data, file: file))
        }
        // The .eval log and its deflate copy are the same run; the .json log is another run.
        #expect(runs[1] == runs[2])
        for traces in runs {
            #expect(traces.count == 6)
            #expect(
                traces.map { $0.name } == [
                    "arith · q1 · epoch 1", "arith · q2 · epoch 1", "arith · q3 · epoch 1", "arith · q1 · epoch 2",
                    "arith · q2 · epoch 2", "arith · q3 · epoch 2",
                ])
            let q3 = traces[2]
            let kinds = q3.spans.map(\.kind).filter { $0 != .other }
            #expect(kinds == [.agent, .llm, .tool, .llm, .eval])
            let calls = q3.spans.filter { $0.kind == .llm }
            // The condensed layout: the second call's input is resolved from events_data.
            #expect(calls[0].input.map(\.role) == ["system", "user"])
            #expect(calls[1].input.map(\.role) == ["system", "user", "assistant", "tool"])
            #expect(calls[1].input[3].text == "error: division by zero")
            #expect(calls[0].output.first?.toolCalls.first?.arguments == #"{"expression":"7 / 0"}"#)
            #expect(calls[0].usage.inputTokens == 43)
            let tool = try #require(q3.spans.first { $0.kind == .tool })
            #expect(tool.status == .error("division by zero") && tool.tool?.name == "calculator")
            #expect(q3.scores.map(\.scorer) == ["match"] && q3.scores[0].value == .string("C"))
            #expect(traces[5].scores[0].value == .string("I"))  // epoch 2 answered "infinity"
            // Tree order: every span's parent comes before it.
            var seen = Set<String>()
            for span in q3.spans {
                #expect(span.parentID.map { seen.contains($0) } ?? true)
                seen.insert(span.spanID)
            }
        }
    }

    @Test func aDamagedMemberIsNamed() throws {
        let (data, _) = try ImporterTests.sample("inspect-arith-deflate.eval")
        let archive = try ZipArchive(data)
        let member = try #require(archive.member(named: "samples/q2_epoch_1.json"))
        // Flip bytes in the middle of that member's compressed data.
        var broken = [UInt8](data)
        let name = Array(member.name.utf8)
        func isHeader(_ i: Int) -> Bool {
            let signature: [UInt8] = [0x50, 0x4B, 3, 4]
            guard Array(broken[i..<(i + 4)]) == signature else { return false }
            return Array(broken[(i + 30)..<(i + 30 + name.count)]) == name
        }
        let offset = try #require((0..<(broken.count - 30 - name.count)).first(where: isHeader))
        for i in 0..<16 { broken[offset + 30 + name.count + 40 + i] ^= 0xA5 }
        do {
            _ = try InspectImporter.traces(Data(broken), file: "x.eval")
            Issue.record("a damaged member was accepted")
        } catch {
            #expect(error.description.hasPrefix("x.eval:samples/q2_epoch_1.json: "))
        }
        #expect(throws: TraceImportError.self) { try InspectImporter.traces(Data(broken.prefix(100)), file: "x.eval") }
    }

    @Test func isoTimestampsBecomeNanoseconds() throws {
        #expect(try InspectImporter.timestamp("1970-01-01T00:00:01.5+00:00") == 1_500_000_000)
        #expect(try InspectImporter.timestamp("2026-01-01T00:00:00Z") == 1_767_225_600_000_000_000)
        #expect(try InspectImporter.timestamp("2026-01-01T01:00:00.000001+01:00") == 1_767_225_600_000_001_000)
        #expect(try InspectImporter.timestamp("yesterday") == nil)
    }
}

/// SWE-agent and mini-SWE-agent trajectories (scripts/fixtures/swe_agent_traj.py and
/// mini_swe_agent.py; the mini ones are real runs of its agent and environment).
@Suite struct SWEAgentImporterTests {
    @Test func miniSubmittedRunBecomesTimedModelAndCommandSteps() throws {
        let (data, file) = try ImporterTests.sample("mini-swe-agent-submitted.traj.json")
        #expect(TraceImport.detect(data, file: file) == .sweAgent)
        let trace = try #require(try TraceImport.traces(data, file: file).first)
        #expect(trace.timed && trace.format == .sweAgent)
        #expect(trace.spans.map(\.kind) == [.agent] + Array(repeating: [SpanKind.llm, .tool], count: 5).flatMap { $0 })
        #expect(trace.spans[0].status == .ok)
        #expect(trace.spans[0].output.first?.text.hasPrefix("diff --git a/stats.py") == true)
        // The reproduction really failed: exit code 1 with the traceback as its result.
        let reproduce = trace.spans[4]
        #expect(reproduce.status == .error("exit code 1"))
        #expect(reproduce.tool?.result?.contains("ZeroDivisionError") == true)
        #expect(reproduce.tool?.arguments.contains("print(stats.mean([]))") == true)
        // Each model turn saw the conversation so far; the cost is the one mini recorded.
        #expect(trace.spans[3].input.map(\.role) == ["system", "user", "assistant", "user"])
        #expect(trace.spans[1].usage.cost == 0.0021)
        #expect(trace.spans.allSatisfy { ($0.endNs ?? $0.startNs) >= $0.startNs })
        #expect(trace.spans[9].endNs! <= trace.spans[10].startNs)
        #expect(trace.metadata["exit_status"] == .string("Submitted"))
    }

    @Test func miniToolCallsRunThatHitItsLimitIsAnError() throws {
        let (data, file) = try ImporterTests.sample("mini-swe-agent-limits.traj.json")
        let trace = try #require(try TraceImport.traces(data, file: file).first)
        #expect(trace.spans[0].status == .error("LimitsExceeded"))
        #expect(trace.spans.filter { $0.kind == .tool }.map { $0.tool?.id } == ["call_1", "call_2"])
        #expect(trace.spans[2].tool?.result?.contains("stats.py") == true)
    }

    /// SWE-agent runs are named by their issue, not their template's first words, and by the
    /// SWE-bench instance their file is named after (the walkthrough's two pydicom runs read alike).
    @Test func sweAgentRunsAreNamedByTheirIssueAndInstance() throws {
        let (data, file) = try ImporterTests.sample("swe-agent-v0.traj")
        let trace = try #require(try TraceImport.traces(data, file: file).first)
        #expect(trace.name == "stats.mean([]) raises ZeroDivisionError; it should return 0.0 for an empty list.")
        let template =
            "We're currently solving the following issue within our repository. Here's the issue text:\nISSUE:\n"
            + "Dataset.to_json_dict fails on PN with empty components\n\nINSTRUCTIONS: ..."
        #expect(
            SWEAgentImporter.taskName(template, instance: "pydicom__pydicom-1458")
                == "pydicom__pydicom-1458: Dataset.to_json_dict fails on PN with empty components")
        #expect(
            SWEAgentImporter.taskName("Please solve this issue: fix the parser", instance: "run") == "fix the parser")
    }

    @Test func sweAgentOldAndNewLayoutsReadAlike() throws {
        let (old, oldFile) = try ImporterTests.sample("swe-agent-v0.traj")
        let (new, newFile) = try ImporterTests.sample("swe-agent-v1.traj")
        let v0 = try #require(try TraceImport.traces(old, file: oldFile).first)
        let v1 = try #require(try TraceImport.traces(new, file: newFile).first)
        for trace in [v0, v1] {
            #expect(!trace.timed)
            #expect(trace.spans.count == 11 && trace.spans[0].status == .ok)
            #expect(trace.spans[0].usage == Usage(inputTokens: 9120, outputTokens: 412, cost: 0.0184))
            #expect(trace.spans[4].tool?.result?.contains("ZeroDivisionError") == true)
        }
        // v1: the exact query, tool calls with ids, the model from replay_config, execution time.
        #expect(v1.spans[3].input.count == 4 && v1.spans[3].model == "gpt-4o-2024-08-06")
        #expect(v1.spans[2].tool?.id == "call_1" && v1.spans[2].tool?.name == "bash")
        #expect(v1.spans[2].attributes["execution_time_s"]?.number != nil)
        // v0: the command's first word names the tool; the input is the history before the turn.
        #expect(v0.spans[2].tool?.name == "cat" && v0.spans[3].input.count == 4)
    }

    @Test func aTrajectoryThatIsNotAListIsRefusedWithItsField() {
        let data = Data(#"{"trajectory": {"action": "ls"}, "history": []}"#.utf8)
        #expect {
            try SWEAgentImporter.traces(data, file: "bad.traj")
        } throws: { error in
            (error as? TraceImportError)?.description == "bad.traj: trajectory: not an array"
        }
    }
}
