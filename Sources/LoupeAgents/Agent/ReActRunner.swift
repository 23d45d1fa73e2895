import Foundation
import LoupeBase

/// A ReAct loop: ask the model, run the tools it calls, feed their results back, until it calls
/// `final_answer` (or answers without a tool), or a limit stops it. Every model call, retry and
/// tool call becomes a span of one trace, handed to `onUpdate` as it happens, so a viewer can
/// show the run live.
package struct ReActRunner: Sendable {
    package var provider: any ChatProvider
    package var tools: [AgentTool]
    package var limits: AgentLimits
    package var systemPrompt: String
    /// Sleeps between retries (tests pass a recorder instead of waiting).
    package var sleep: @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }
    package var now: @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1e9) }

    package static let defaultSystemPrompt = """
        You answer questions about the documents in a Loupe workspace. Use the tools: search finds \
        chunks, read shows a chunk or a whole document, calculator does arithmetic, sql runs a read-only \
        SELECT on the workspace. Call final_answer with the answer and the chunk ids you relied on.
        """

    package init(
        provider: any ChatProvider, tools: [AgentTool], limits: AgentLimits = AgentLimits(),
        systemPrompt: String = ReActRunner.defaultSystemPrompt
    ) {
        self.provider = provider
        self.tools = tools.contains { $0.spec.name == "final_answer" } ? tools : tools + [.finalAnswer]
        self.limits = limits
        self.systemPrompt = systemPrompt
    }

    /// Runs to the end and returns the trace (also passed to `onUpdate` after every span).
    package func run(
        _ question: String, id: String, isCancelled: @Sendable () -> Bool = { false },
        onText: @escaping @Sendable (String) -> Void = { _ in }, onUpdate: (Trace) -> Void = { _ in }
    ) -> Trace {
        let started = now()
        var root = TraceSpan(spanID: "agent", parentID: nil, kind: .agent, name: question, startNs: started, endNs: nil)
        root.input = [Message(role: "user", text: question)]
        root.attributes["agent.provider"] = .string(provider.label)
        root.attributes["agent.model"] = .string(provider.model)
        root.attributes["agent.tools"] = .array(tools.map { .string($0.spec.name) })
        limits.record(on: &root)
        var trace = Trace(externalID: id, format: .loupe, name: String(question.prefix(120)), spans: [root])
        trace.metadata["provider"] = .string(provider.label)
        trace.metadata["model"] = .string(provider.model)
        trace.metadata["status"] = "running"
        onUpdate(trace)

        let messages = [Message(role: "system", text: systemPrompt), Message(role: "user", text: question)]
        return drive(
            trace, messages: messages, started: started, idPrefix: "", rootID: "agent", isCancelled: isCancelled,
            onText: onText, onUpdate: onUpdate)
    }

    /// Continues a run from a fork: `trace` holds the parent's spans up to the fork point (the
    /// edited one included), `messages` the conversation as it stood there. New spans get ids
    /// starting with "fork." so they never collide with the copied ones.
    ///
    /// The limits bound the whole run, the copied part included, as they bound the parent: its
    /// model calls and their tokens count against `maxSteps` and `maxTokens`, and the clock runs
    /// from the root's start (the caller continues `now` where the copied spans end). A fork of a
    /// run stopped at its step limit therefore stops there too, unless it is given more steps.
    package func resume(
        _ trace: Trace, messages: [Message], isCancelled: @Sendable () -> Bool = { false },
        onText: @escaping @Sendable (String) -> Void = { _ in }, onUpdate: (Trace) -> Void = { _ in }
    ) -> Trace {
        var trace = trace
        trace.metadata["provider"] = .string(provider.label)
        trace.metadata["model"] = .string(provider.model)
        trace.metadata["status"] = "running"
        trace.spans[0].status = .unset
        trace.spans[0].endNs = nil
        trace.spans[0].output = []
        limits.record(on: &trace.spans[0])
        onUpdate(trace)
        let made = trace.spans.dropFirst().filter { $0.kind == .llm && !$0.status.isError }
        return drive(
            trace, messages: messages, started: min(trace.spans[0].startNs, now()), idPrefix: "fork.",
            rootID: trace.spans[0].spanID, calls: made.count,
            tokens: made.reduce(0) { $0 + ($1.usage.inputTokens ?? 0) + ($1.usage.outputTokens ?? 0) },
            isCancelled: isCancelled, onText: onText, onUpdate: onUpdate)
    }

    private func drive(
        _ trace: Trace, messages: [Message], started: Int64, idPrefix: String, rootID: String, calls: Int = 0,
        tokens: Int = 0, isCancelled: @Sendable () -> Bool, onText: @escaping @Sendable (String) -> Void,
        onUpdate: (Trace) -> Void
    ) -> Trace {
        var trace = trace
        var messages = messages
        var tokens = tokens
        var calls = calls
        var outcome: SpanStatus = .error("no answer")
        var answer: String?
        let byName = Dictionary(tools.map { ($0.spec.name, $0) }, uniquingKeysWith: { a, _ in a })

        func outOfTime() -> Bool { Double(now() - started) / 1e9 >= limits.maxSeconds }

        func finish(_ status: SpanStatus) -> Trace {
            trace.spans[0].status = status
            trace.spans[0].endNs = now()
            if let answer { trace.spans[0].output = [Message(role: "assistant", text: answer)] }
            trace.metadata["status"] = .string(status.isError ? "error" : "ok")
            onUpdate(trace)
            return trace
        }

        run: while true {
            if isCancelled() { return finish(.error("cancelled")) }
            if calls >= limits.maxSteps { return finish(.error("step limit \(limits.maxSteps) reached")) }
            if let max = limits.maxTokens, tokens >= max { return finish(.error("token limit \(max) reached")) }
            if outOfTime() { return finish(.error("time limit \(Calculator.format(limits.maxSeconds)) s reached")) }
            calls += 1
            let request = ChatRequest(
                messages: messages, tools: tools.map(\.spec), maxTokens: nil,
                secondsLeft: limits.maxSeconds - Double(now() - started) / 1e9)
            var response: ChatResponse?
            for attempt in 0...limits.retries {
                let callStart = now()
                var span = TraceSpan(
                    spanID: idPrefix + "llm\(calls)" + (attempt > 0 ? ".retry\(attempt)" : ""), parentID: rootID,
                    kind: .llm,
                    name: "chat \(provider.model)", startNs: callStart, endNs: nil)
                span.model = provider.model
                span.input = messages
                span.attributes["gen_ai.provider.name"] = .string(provider.label)
                do {
                    let answered = try provider.complete(request, onText: onText)
                    span.endNs = now()
                    span.output = [answered.message]
                    span.usage = answered.usage
                    span.model = answered.model
                    span.status = .ok
                    if let reason = answered.finishReason { span.attributes["finish_reason"] = .string(reason) }
                    for (key, value) in answered.attributes where span.attributes[key] == nil {
                        span.attributes[key] = value
                    }
                    trace.spans.append(span)
                    onUpdate(trace)
                    response = answered
                    break
                } catch {
                    span.endNs = now()
                    let last = attempt == limits.retries || !error.retryable
                    let wait = limits.backoffSeconds * pow(2, Double(attempt))
                    span.status = .error(
                        error.description + (last ? "" : " — retrying in \(Calculator.format(wait)) s"))
                    trace.spans.append(span)
                    onUpdate(trace)
                    if outOfTime() {
                        return finish(.error("time limit \(Calculator.format(limits.maxSeconds)) s reached"))
                    }
                    if last { return finish(.error("model call failed: \(error.description)")) }
                    sleep(wait)
                    if isCancelled() { return finish(.error("cancelled")) }
                }
            }
            guard let response else { return finish(.error("model call failed")) }
            tokens += (response.usage.inputTokens ?? 0) + (response.usage.outputTokens ?? 0)
            messages.append(response.message)
            guard !response.message.toolCalls.isEmpty else {
                // An answer without a tool call is the final answer.
                answer = response.message.text
                outcome = .ok
                break run
            }
            for (index, call) in response.message.toolCalls.enumerated() {
                let callID = call.id ?? "call_\(calls)_\(index)"
                var span = TraceSpan(
                    spanID: idPrefix + "tool\(calls).\(index)", parentID: rootID, kind: .tool, name: call.name,
                    startNs: now(),
                    endNs: nil)
                var executed = call
                executed.id = callID
                let result: String
                var children: [TraceSpan] = []
                do {
                    guard let tool = byName[call.name] else {
                        throw ToolFailure(
                            "no tool named '\(call.name)' (tools: \(byName.keys.sorted().joined(separator: ", ")))")
                    }
                    if let problem = call.argumentsError { throw ToolFailure(problem) }
                    let arguments = call.arguments.isEmpty ? JSONValue.object([:]) : try JSONValue.parse(call.arguments)
                    let output = try tool.perform(arguments)
                    result = output.text
                    children = output.spans
                    executed.result = result
                    span.status = .ok
                    if call.name == "final_answer" {
                        answer = result
                        if let cited = arguments["citations"] { trace.metadata["citations"] = cited }
                        outcome = .ok
                    }
                } catch {
                    result = "error: \(error)"
                    executed.error = "\(error)"
                    span.status = .error("\(error)")
                }
                span.endNs = now()
                span.tool = executed
                trace.spans.append(span)
                trace.spans += Self.nest(children, under: span)
                onUpdate(trace)
                messages.append(Message(role: "tool", text: result, toolCallID: callID))
            }
            if answer != nil { break run }
        }
        return finish(outcome)
    }

    /// A tool call's own spans placed under its span: ids prefixed with the call's, the top ones
    /// its children, times moved from the call's start onto the trace's clock. A clock that only
    /// counts steps (a fork of an untimed trace) has no room for nanoseconds: the times are then
    /// scaled to fit inside the call, so the order stays.
    package static func nest(_ children: [TraceSpan], under parent: TraceSpan) -> [TraceSpan] {
        guard !children.isEmpty else { return [] }
        let room = max(0, (parent.endNs ?? parent.startNs) - parent.startNs)
        let latest = children.map { $0.endNs ?? $0.startNs }.max() ?? 0
        let scale = latest > room && latest > 0 ? Double(room) / Double(latest) : 1
        func place(_ offset: Int64) -> Int64 {
            parent.startNs + (scale == 1 ? offset : Int64((Double(offset) * scale).rounded(.down)))
        }
        return children.map { child in
            var span = child
            span.spanID = parent.spanID + "/" + child.spanID
            span.parentID = child.parentID.map { parent.spanID + "/" + $0 } ?? parent.spanID
            span.startNs = place(child.startNs)
            span.endNs = child.endNs.map(place)
            return span
        }
    }
}
