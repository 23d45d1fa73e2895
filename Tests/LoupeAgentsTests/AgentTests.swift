import Foundation
import LoupeAgents
import LoupeBase
import Testing

@Suite struct CalculatorTests {
    @Test func arithmeticFollowsThePrecedenceRules() throws {
        #expect(try Calculator.evaluate("(17 + 25) * 3") == 126)
        #expect(try Calculator.evaluate("2 ^ 3 ^ 2") == 512)  // right-associative
        #expect(try Calculator.evaluate("2 ** 10 - -4") == 1028)
        #expect(try Calculator.evaluate("10 % 4 + 7 / 2") == 5.5)
        #expect(try Calculator.evaluate("sqrt(16) + max(1, 9, 3) + round(3.14159, 2)") == 16.14)
        #expect(try Calculator.evaluate("2 * pi") == 2 * .pi)
        #expect(try Calculator.evaluate("1.5e3 / 3") == 500)
        #expect(Calculator.format(126) == "126" && Calculator.format(0.1 + 0.2) == "0.3")
    }

    @Test func badExpressionsSayWhatAndWhere() {
        func failure(_ text: String) -> String? {
            do {
                _ = try Calculator.evaluate(text)
                return nil
            } catch { return error.message }
        }
        #expect(failure("7 / 0") == "division by zero at column 3")
        #expect(failure("2 + ") == "expected a number: the expression ended early")
        #expect(failure("2 + 3)") == "unexpected ')' at column 6")
        #expect(failure("import os") == "unknown name 'import' at column 1")
        #expect(failure("sqrt(1, 2)") == "sqrt takes 1 argument(s), got 2")
        #expect(
            failure(String(repeating: "(", count: 100) + "1" + String(repeating: ")", count: 100))?.contains("64")
                == true)
        #expect(failure("exp(1000)") == "the result is not a finite number")
    }

    @Test func theExpressionInAQuestionIsFound() {
        #expect(Calculator.expression(in: "What is (17 + 25) * 3?") == "(17 + 25) * 3")
        #expect(Calculator.expression(in: "compute sqrt(2) * 10, please") == "sqrt(2) * 10")
        #expect(Calculator.expression(in: "what is 7/0?") == "7/0")
        #expect(Calculator.expression(in: "how do swept wings flutter?") == nil)
        #expect(Calculator.expression(in: "the 1960s paper") == nil)
    }

    /// A 320k-character question (it took 19 s before the scan became linear) still finds its
    /// expression, names in any case included, and a name at the very end is still a name.
    @Test func theExpressionInAVeryLongQuestionIsFound() {
        let padding = String(repeating: "lorem ipsum dolor sit amet ", count: 12_000)
        #expect(Calculator.expression(in: padding + "what is SQRT(16) + 1?") == "SQRT(16) + 1")
        #expect(Calculator.expression(in: padding + "2 * pi") == "2 * pi")
    }
}

@Suite struct SSEParserTests {
    @Test func eventsSplitAnywhereAcrossChunksComeOutWhole() {
        let stream = "data: {\"a\":1}\n\n: a comment\ndata: line one\ndata: line two\r\n\r\ndata: [DONE]\n\n"
        let bytes = Array(stream.utf8)
        for size in [1, 3, 7, bytes.count] {
            let parser = SSEParser()
            var events: [String] = []
            for start in stride(from: 0, to: bytes.count, by: size) {
                events += parser.feed(Data(bytes[start..<min(bytes.count, start + size)]))
            }
            events += parser.finish()
            #expect(events == ["{\"a\":1}", "line one\nline two", "[DONE]"])
        }
    }
}

/// The runner driving the offline policy (word-overlap routing) with the calculator.
@Suite struct ReActRunnerTests {
    func runner(_ tools: [AgentTool], maxSteps: Int = 8) -> ReActRunner {
        var limits = AgentLimits()
        limits.maxSteps = maxSteps
        var runner = ReActRunner(
            provider: OfflinePolicy(similarity: OfflinePolicy.wordOverlap, named: "word-overlap"), tools: tools,
            limits: limits)
        let ticks = ManagedCounter()
        runner.now = { ticks.next() }
        return runner
    }

    @Test func aCalculatorQuestionIsAnsweredAndEveryStepRecorded() {
        var updates = 0
        let trace = runner([.calculator]).run("What is (17 + 25) * 3?", id: "t", onUpdate: { _ in updates += 1 })
        #expect(trace.spans.map(\.kind) == [.agent, .llm, .tool, .llm, .tool])
        #expect(trace.spans[2].tool?.arguments == #"{"expression":"(17 + 25) * 3"}"#)
        #expect(trace.spans[2].tool?.result == "126")
        #expect(trace.spans[0].status == .ok)
        #expect(trace.spans[0].output.first?.text == "(17 + 25) * 3 = 126")
        #expect(trace.spans[1].model == "offline-policy (word-overlap routing)")
        #expect(trace.metadata["status"] == "ok")
        // Live: the trace was handed out after the start and after every span, and at the end.
        #expect(updates == 1 + 4 + 1)
        #expect(trace.spans.allSatisfy { ($0.endNs ?? 0) >= $0.startNs })
    }

    @Test func aToolErrorGoesBackToTheModelAndTheRunGoesOn() {
        let trace = runner([.calculator]).run("what is 7/0?", id: "t")
        #expect(trace.spans[2].status == .error("division by zero at column 2"))
        #expect(trace.spans[3].input.last?.text == "error: division by zero at column 2")
        #expect(trace.spans[0].status == .ok)
        #expect(trace.spans[0].output.first?.text == "I could not compute 7/0: division by zero at column 2")
    }

    /// A tool that also gives back spans of its work: a pass 5 ms long with a layer inside it.
    static let calculatorWithWork = AgentTool(
        spec: AgentTool.calculator.spec,
        perform: { arguments in
            var pass = TraceSpan(
                spanID: "pass", parentID: nil, kind: .embedding, name: "pass", startNs: 1_000, endNs: 5_000_000)
            pass.attributes["loupe.kernel_runs"] = .array([.number(7)])
            let layer = TraceSpan(
                spanID: "pass.0", parentID: "pass", kind: .other, name: "layer 0", startNs: 2_000, endNs: 4_000_000)
            return ToolOutput(try AgentTool.calculator.perform(arguments).text, spans: [pass, layer])
        })

    @Test func aToolsOwnSpansAreNestedUnderItsCallInsideItsTime() {
        let trace = runner([Self.calculatorWithWork]).run("What is (17 + 25) * 3?", id: "t")
        #expect(trace.spans.map(\.kind) == [.agent, .llm, .tool, .embedding, .other, .llm, .tool])
        let (call, pass, layer) = (trace.spans[2], trace.spans[3], trace.spans[4])
        #expect(call.tool?.result == "126")
        #expect(pass.spanID == "tool1.0/pass" && pass.parentID == "tool1.0")
        #expect(layer.spanID == "tool1.0/pass.0" && layer.parentID == "tool1.0/pass")
        #expect(pass.attributes["loupe.kernel_runs"] == .array([.number(7)]))
        // This clock ticks once a reading, so the call spans one tick: the 5 ms of work are
        // scaled into it, and every span stays inside its parent.
        for (child, parent) in [(pass, call), (layer, pass)] {
            #expect(child.startNs >= parent.startNs && child.endNs! <= parent.endNs!)
        }
        #expect(trace.spans[5].startNs > call.endNs!)
    }

    @Test func onARealClockTheWorkKeepsItsOwnTimes() {
        var call = TraceSpan(
            spanID: "tool1.0", parentID: "agent", kind: .tool, name: "search", startNs: 1_000_000_000,
            endNs: 1_010_000_000)
        call.status = .ok
        let child = TraceSpan(
            spanID: "pass", parentID: nil, kind: .embedding, name: "pass", startNs: 3_000, endNs: 9_000)
        let nested = ReActRunner.nest([child], under: call)
        #expect(nested.map(\.startNs) == [1_000_003_000] && nested.map(\.endNs) == [1_000_009_000])
        #expect(ReActRunner.nest([], under: call).isEmpty)
    }

    @Test func theStepLimitEndsTheRunAsAnError() {
        let trace = runner([.calculator], maxSteps: 1).run("What is 2 + 2?", id: "t")
        #expect(trace.spans[0].status == .error("step limit 1 reached"))
        #expect(trace.metadata["status"] == "error")
    }
}

final class ManagedCounter: @unchecked Sendable {
    private var value: Int64 = 0
    private let lock = NSLock()
    func next() -> Int64 {
        lock.withLock {
            value += 1_000
            return value
        }
    }
}
