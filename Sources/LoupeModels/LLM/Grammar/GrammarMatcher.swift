import Foundation
import LoupeBase

/// Follows a ``Grammar`` one byte at a time: a pushdown matcher whose stack holds the values
/// being written (an object inside an array inside a tool call). `accepts(_:)` asks whether
/// some bytes could come next without changing anything, so a sampler can try candidate
/// tokens in probability order; `consume(_:)` moves on.
///
/// It is a value: copying one copies its stack (a few frames), which is what `accepts` does.
/// Work per byte is constant, except while typing an object's key or a tool's name, which is
/// checked against the names still possible.
package struct GrammarMatcher: Sendable {
    private var stack: [Frame]

    package init(_ grammar: Grammar) {
        switch grammar.root {
        case .value(let node): stack = [.value(node)]
        case .toolCalls(let calls): stack = [.toolCalls(ToolCallState(grammar: calls))]
        }
    }

    /// True when the output may end here: the grammar is complete (or the reply is free text).
    package var canEnd: Bool {
        guard let top = stack.last else { return true }
        switch top {
        case .text: return true
        case .toolCalls(let state):
            // In `auto`, text that only begins like a block ("<tool") is plain text too.
            if case .opening = state.phase { return state.grammar.allowsText }
            return false
        default: return stack.count == 1 && top.isFinishable
        }
    }

    /// True once the reply left the grammar for plain text (``ToolChoice/auto``): anything may follow.
    package var isFreeText: Bool {
        if case .text? = stack.last { return true }
        return false
    }

    /// True when nothing more may be written (only the end).
    package var isComplete: Bool { stack.isEmpty }

    /// Whether `bytes` may come next. Leaves the matcher as it was.
    package func accepts(_ bytes: some Sequence<UInt8>) -> Bool {
        if isFreeText { return true }
        var copy = self
        return copy.consume(bytes)
    }

    /// Moves past `bytes`; false (and the matcher in an unspecified state) when they cannot come next.
    @discardableResult
    package mutating func consume(_ bytes: some Sequence<UInt8>) -> Bool {
        for byte in bytes where !feed(byte) { return false }
        return true
    }

    // MARK: Frames

    private enum Frame: Sendable {
        /// Waiting for a value's first byte.
        case value(JSONSchemaNode)
        /// These bytes, exactly.
        case literal([UInt8], at: Int)
        /// One of these byte strings (an enum's values): the indices still possible, bytes typed.
        case choice([[UInt8]], alive: [Int], typed: Int)
        case string(StringState)
        case number(NumberState)
        case object(ObjectState)
        case array(ArrayState)
        case toolCalls(ToolCallState)
        /// Free text: anything.
        case text

        /// May be left without a byte of its own (the next byte belongs to the parent).
        var isFinishable: Bool {
            switch self {
            case .number(let state): state.isFinal
            case .choice(let candidates, let alive, let typed): alive.contains { candidates[$0].count == typed }
            default: false
            }
        }
    }

    private mutating func feed(_ byte: UInt8) -> Bool {
        while let top = stack.last {
            switch step(top, byte) {
            case .accepted: return true
            case .rejected: return false
            case .handOver:
                // The top frame is done without this byte: its parent reads it.
                stack.removeLast()
            }
        }
        return false
    }

    /// What a frame did with a byte: took it, refused it, or ended before it (its parent reads it).
    enum Outcome { case accepted, rejected, handOver }

    private mutating func replaceTop(_ frame: Frame) { stack[stack.count - 1] = frame }

    private mutating func step(_ frame: Frame, _ byte: UInt8) -> Outcome {
        switch frame {
        case .text: return .accepted
        case .value(let node): return startValue(node, byte)
        case .literal(let bytes, let at):
            guard bytes[at] == byte else { return .rejected }
            if at + 1 == bytes.count { stack.removeLast() } else { replaceTop(.literal(bytes, at: at + 1)) }
            return .accepted
        case .choice(let candidates, let alive, let typed):
            let next = alive.filter { candidates[$0].count > typed && candidates[$0][typed] == byte }
            if next.isEmpty { return alive.contains { candidates[$0].count == typed } ? .handOver : .rejected }
            if next.count == 1 && candidates[next[0]].count == typed + 1 {
                stack.removeLast()
            } else {
                replaceTop(.choice(candidates, alive: next, typed: typed + 1))
            }
            return .accepted
        case .string(var state):
            switch state.feed(byte) {
            case .more: replaceTop(.string(state))
            case .closed: stack.removeLast()
            case .rejected: return .rejected
            }
            return .accepted
        case .number(var state):
            let outcome = state.feed(byte)
            if outcome == .accepted { replaceTop(.number(state)) }
            return outcome
        case .object(var state): return object(&state, byte)
        case .array(var state): return array(&state, byte)
        case .toolCalls(var state): return toolCalls(&state, byte)
        }
    }

    /// The first byte of a value of schema `node`.
    private mutating func startValue(_ node: JSONSchemaNode, _ byte: UInt8) -> Outcome {
        switch (node, byte) {
        case (.any, UInt8(ascii: "{")), (.anyObject, UInt8(ascii: "{")):
            replaceTop(.object(ObjectState(properties: nil, required: [])))
        case (.object(let properties, let required), UInt8(ascii: "{")):
            replaceTop(.object(ObjectState(properties: properties, required: required)))
        case (.any, UInt8(ascii: "[")): replaceTop(.array(ArrayState(items: .any, minItems: 0, maxItems: nil)))
        case (.array(let items, let minimum, let maximum), UInt8(ascii: "[")):
            replaceTop(.array(ArrayState(items: items, minItems: minimum, maxItems: maximum)))
        case (.any, UInt8(ascii: "\"")): replaceTop(.string(StringState(minLength: 0, maxLength: nil)))
        case (.string(let minimum, let maximum), UInt8(ascii: "\"")):
            replaceTop(.string(StringState(minLength: minimum, maxLength: maximum)))
        case (.any, UInt8(ascii: "-")), (.any, UInt8(ascii: "0")...UInt8(ascii: "9")),
            (.number, UInt8(ascii: "-")), (.number, UInt8(ascii: "0")...UInt8(ascii: "9")):
            var state = NumberState(integerOnly: false, minimum: nil, maximum: nil)
            guard state.feed(byte) == .accepted else { return .rejected }
            replaceTop(.number(state))
        case (.integer(let minimum, let maximum), UInt8(ascii: "-")),
            (.integer(let minimum, let maximum), UInt8(ascii: "0")...UInt8(ascii: "9")):
            var state = NumberState(integerOnly: true, minimum: minimum, maximum: maximum)
            guard state.feed(byte) == .accepted else { return .rejected }
            replaceTop(.number(state))
        case (.any, UInt8(ascii: "t")), (.boolean, UInt8(ascii: "t")): replaceTop(.literal(Array("true".utf8), at: 1))
        case (.any, UInt8(ascii: "f")), (.boolean, UInt8(ascii: "f")):
            replaceTop(.literal(Array("false".utf8), at: 1))
        case (.any, UInt8(ascii: "n")), (.null, UInt8(ascii: "n")): replaceTop(.literal(Array("null".utf8), at: 1))
        case (.oneOf(let values), _):
            let candidates = values.map { Array($0.utf8) }
            replaceTop(.choice(candidates, alive: Array(candidates.indices), typed: 0))
            return step(stack[stack.count - 1], byte)
        case (.union(let nodes), _):
            for node in nodes {
                var attempt = self
                attempt.replaceTop(.value(node))
                if attempt.step(.value(node), byte) == .accepted {
                    self = attempt
                    return .accepted
                }
            }
            return .rejected
        default: return .rejected
        }
        return .accepted
    }

    /// Pushes a child value over the top frame, which is left as `parent` (the state it is in
    /// once the child is done), and gives the child `byte`.
    private mutating func child(_ node: JSONSchemaNode, parent: Frame, _ byte: UInt8) -> Outcome {
        replaceTop(parent)
        stack.append(.value(node))
        if startValue(node, byte) == .accepted { return .accepted }
        stack.removeLast()
        return .rejected
    }

    // MARK: Objects

    private struct ObjectState: Sendable {
        enum Phase: Sendable, Equatable {
            /// After `{`.
            case open
            /// After `,` (one space may follow), or after that space.
            case comma(spaced: Bool)
            /// Inside a declared key: the bytes typed after its quote.
            case key([UInt8])
            /// After a key's closing quote.
            case colon
            /// After `:` (one space may follow), or after that space.
            case value(spaced: Bool)
            /// After a value.
            case afterValue
        }
        /// nil: any keys, values of any kind.
        var properties: [JSONSchemaNode.Property]?
        /// Each property's name as written inside a JSON string.
        var encodedNames: [[UInt8]]
        var required: Set<String>
        /// Indices of the properties written so far.
        var seen: Set<Int> = []
        var phase = Phase.open
        /// The property whose value comes next.
        var current: JSONSchemaNode = .any

        init(properties: [JSONSchemaNode.Property]?, required: Set<String>) {
            self.properties = properties
            self.required = required
            encodedNames =
                properties?.map { Array(JSONValue.string($0.name).compactJSON.utf8.dropFirst().dropLast()) } ?? []
        }

        var mayClose: Bool {
            guard let properties else { return true }
            return required.allSatisfy { name in seen.contains { properties[$0].name == name } }
        }
        var mayAddKey: Bool { properties == nil || seen.count < encodedNames.count }
    }

    private mutating func object(_ state: inout ObjectState, _ byte: UInt8) -> Outcome {
        switch state.phase {
        case .open, .comma(spaced: true), .comma(spaced: false):
            if state.phase == .comma(spaced: false) && byte == UInt8(ascii: " ") {
                state.phase = .comma(spaced: true)
                replaceTop(.object(state))
                return .accepted
            }
            if byte == UInt8(ascii: "}") && state.phase == .open && state.mayClose {
                stack.removeLast()
                return .accepted
            }
            guard byte == UInt8(ascii: "\""), state.mayAddKey else { return .rejected }
            if state.properties == nil {
                // A free key: a string, then the colon.
                state.phase = .colon
                replaceTop(.object(state))
                stack.append(.string(StringState(minLength: 0, maxLength: nil)))
            } else {
                state.phase = .key([])
                replaceTop(.object(state))
            }
            return .accepted
        case .key(let typed):
            let open = state.encodedNames.indices.filter { !state.seen.contains($0) }
            if byte == UInt8(ascii: "\"") {
                guard let match = open.first(where: { state.encodedNames[$0] == typed }) else { return .rejected }
                state.seen.insert(match)
                state.current = state.properties?[match].schema ?? .any
                state.phase = .colon
            } else {
                let next = typed + [byte]
                guard open.contains(where: { state.encodedNames[$0].starts(with: next) }) else { return .rejected }
                state.phase = .key(next)
            }
            replaceTop(.object(state))
            return .accepted
        case .colon:
            guard byte == UInt8(ascii: ":") else { return .rejected }
            state.phase = .value(spaced: false)
            replaceTop(.object(state))
            return .accepted
        case .value(let spaced):
            if !spaced && byte == UInt8(ascii: " ") {
                state.phase = .value(spaced: true)
                replaceTop(.object(state))
                return .accepted
            }
            let node = state.current
            state.phase = .afterValue
            return child(node, parent: .object(state), byte)
        case .afterValue:
            if byte == UInt8(ascii: "}") && state.mayClose {
                stack.removeLast()
                return .accepted
            }
            guard byte == UInt8(ascii: ","), state.mayAddKey else { return .rejected }
            state.phase = .comma(spaced: false)
            replaceTop(.object(state))
            return .accepted
        }
    }

    // MARK: Arrays

    private struct ArrayState: Sendable {
        enum Phase: Sendable, Equatable {
            case open
            case comma(spaced: Bool)
            case afterValue
        }
        var items: JSONSchemaNode
        var minItems: Int
        var maxItems: Int?
        var count = 0
        var phase = Phase.open
    }

    private mutating func array(_ state: inout ArrayState, _ byte: UInt8) -> Outcome {
        switch state.phase {
        case .open, .comma:
            if state.phase == .comma(spaced: false) && byte == UInt8(ascii: " ") {
                state.phase = .comma(spaced: true)
                replaceTop(.array(state))
                return .accepted
            }
            if state.phase == .open && byte == UInt8(ascii: "]") {
                guard state.minItems == 0 else { return .rejected }
                stack.removeLast()
                return .accepted
            }
            if let maximum = state.maxItems, state.count >= maximum { return .rejected }
            state.count += 1
            state.phase = .afterValue
            return child(state.items, parent: .array(state), byte)
        case .afterValue:
            if byte == UInt8(ascii: "]") && state.count >= state.minItems {
                stack.removeLast()
                return .accepted
            }
            guard byte == UInt8(ascii: ","), state.maxItems.map({ state.count < $0 }) ?? true else { return .rejected }
            state.phase = .comma(spaced: false)
            replaceTop(.array(state))
            return .accepted
        }
    }

    // MARK: Tool calls

    private struct ToolCallState: Sendable {
        enum Phase: Sendable, Equatable {
            /// Typing `<tool_call>[` (in `auto`, a byte off it turns the reply into text).
            case opening(Int)
            /// Where a call's `{` may come: first (where `auto` also allows `]`), or after `, `.
            case callOpen(first: Bool, spaced: Bool)
            /// Typing `"name": "`.
            case nameKey(Int)
            /// Typing the tool's name.
            case name([UInt8])
            /// Typing `", "arguments": `, then the arguments (a child) of tool `tool`.
            case argumentsKey(Int, tool: Int)
            /// After the arguments: `}`.
            case callClose
            /// After a call: `,` or the closing `]</tool_call>`.
            case afterCall
            case closing(Int)
        }
        var grammar: ToolCallGrammar
        var phase = Phase.opening(0)
        var calls = 0
    }

    private mutating func toolCalls(_ state: inout ToolCallState, _ byte: UInt8) -> Outcome {
        func advance(_ phase: ToolCallState.Phase) -> Outcome {
            state.phase = phase
            replaceTop(.toolCalls(state))
            return .accepted
        }
        switch state.phase {
        case .opening(let at):
            if ToolCallGrammar.opening[at] == byte {
                return advance(
                    at + 1 == ToolCallGrammar.opening.count ? .callOpen(first: true, spaced: false) : .opening(at + 1))
            }
            guard state.grammar.allowsText else { return .rejected }
            replaceTop(.text)
            return .accepted
        case .callOpen(let first, let spaced):
            if !first && !spaced && byte == UInt8(ascii: " ") { return advance(.callOpen(first: false, spaced: true)) }
            if first && byte == UInt8(ascii: "]") && state.grammar.allowsText { return advance(.closing(1)) }
            guard byte == UInt8(ascii: "{") else { return .rejected }
            state.calls += 1
            return advance(.nameKey(0))
        case .nameKey(let at):
            guard ToolCallGrammar.nameKey[at] == byte else { return .rejected }
            return advance(at + 1 == ToolCallGrammar.nameKey.count ? .name([]) : .nameKey(at + 1))
        case .name(let typed):
            if byte == UInt8(ascii: "\"") {
                guard let index = state.grammar.tools.firstIndex(where: { $0.encodedName == typed }) else {
                    return .rejected
                }
                return advance(.argumentsKey(1, tool: index))
            }
            let next = typed + [byte]
            guard state.grammar.tools.contains(where: { $0.encodedName.starts(with: next) }) else { return .rejected }
            return advance(.name(next))
        case .argumentsKey(let at, let tool):
            if at == ToolCallGrammar.argumentsKey.count {
                state.phase = .callClose
                return child(state.grammar.tools[tool].arguments, parent: .toolCalls(state), byte)
            }
            guard ToolCallGrammar.argumentsKey[at] == byte else { return .rejected }
            return advance(.argumentsKey(at + 1, tool: tool))
        case .callClose:
            guard byte == UInt8(ascii: "}") else { return .rejected }
            return advance(.afterCall)
        case .afterCall:
            if byte == UInt8(ascii: ",") && state.calls < state.grammar.maxCalls {
                return advance(.callOpen(first: false, spaced: false))
            }
            guard byte == UInt8(ascii: "]") else { return .rejected }
            return advance(.closing(1))
        case .closing(let at):
            guard ToolCallGrammar.closing[at] == byte else { return .rejected }
            if at + 1 == ToolCallGrammar.closing.count {
                stack.removeLast()
                return .accepted
            }
            return advance(.closing(at + 1))
        }
    }
}
