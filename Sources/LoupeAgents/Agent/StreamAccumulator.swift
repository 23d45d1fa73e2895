import Foundation
import LoupeBase
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Folds `chat.completion.chunk` events into one answer: text deltas appended, tool calls
/// assembled by their `index` (id and name in the first delta, arguments in pieces), usage from
/// the last chunk.
///
/// Thread-safety: any thread. URLSession's delegate queue writes it and the caller reads it once
/// the exchange is done; every access goes through one lock.
final class StreamAccumulator: Sendable {
    private struct State {
        var status = 0
        var errorBody = Data()
        var sawData = false
        var streamError: String?
        var text = ""
        var reasoning = ""
        var calls: [Int: (id: String?, name: String, arguments: String)] = [:]
        var usage = Usage()
        var model: String
        var finishReason: String?
    }

    private let state: Mutex<State>

    init(model: String) { state = Mutex(State(model: model)) }

    /// The HTTP status of the response (0 until it arrives).
    var status: Int {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }

    /// The body of a response that is not a stream of events (an error, or `stream: false`).
    var errorBody: Data { state.withLock { $0.errorBody } }
    /// True once an event carried JSON.
    var sawData: Bool { state.withLock { $0.sawData } }
    /// The error an event reported in the stream.
    var streamError: String? { state.withLock { $0.streamError } }

    func appendBody(_ chunk: Data) { state.withLock { $0.errorBody.append(chunk) } }

    func apply(event: String, onText: @Sendable (String) -> Void) {
        guard event != "[DONE]" else { return }
        guard let chunk = try? JSONValue.parse(event) else { return }
        let piece: String? = state.withLock { state in
            state.sawData = true
            if let error = chunk["error"] {
                state.streamError = error["message"]?.string ?? error.compactJSON
                return nil
            }
            if let name = chunk["model"]?.string { state.model = name }
            if let u = chunk["usage"], u.object != nil { state.usage = OpenAICompatibleProvider.usage(u) }
            guard let choice = chunk["choices"]?.array?.first else { return nil }
            if let reason = choice["finish_reason"]?.string { state.finishReason = reason }
            let delta = choice["delta"] ?? .object([:])
            if let piece = (delta["reasoning_content"] ?? delta["reasoning"])?.string { state.reasoning += piece }
            for call in delta["tool_calls"]?.array ?? [] {
                let index = call["index"]?.int.map(Int.init) ?? state.calls.count
                var entry = state.calls[index] ?? (id: nil, name: "", arguments: "")
                if let id = call["id"]?.string { entry.id = id }
                if let name = call["function"]?["name"]?.string { entry.name += name }
                if let arguments = call["function"]?["arguments"]?.string { entry.arguments += arguments }
                state.calls[index] = entry
            }
            guard let piece = delta["content"]?.string, !piece.isEmpty else { return nil }
            state.text += piece
            return piece
        }
        // Outside the lock: the callback may take its time (it draws the streamed text).
        if let piece { onText(piece) }
    }

    func response() -> ChatResponse {
        state.withLock { state in
            var message = Message(
                role: "assistant", text: state.text,
                toolCalls: state.calls.keys.sorted().map { state.calls[$0]! }.map {
                    ToolCall(id: $0.id, name: $0.name, arguments: $0.arguments)
                })
            if !state.reasoning.isEmpty { message.reasoning = state.reasoning }
            return ChatResponse(
                message: message, usage: state.usage, model: state.model, finishReason: state.finishReason)
        }
    }
}
