import LoupeBase

/// Reads a reply as it is generated and says what OpenAI's stream sends for it: text as
/// `content` deltas, or, for SmolLM2's tool-call block (`<tool_call>[{"name": "f", "arguments":
/// {…}}, …]</tool_call>`, the shape ``Grammar/toolCalls(_:choice:maxCalls:stringLimit:)``
/// holds a reply to), each call's name once it is whole and then its arguments piece by piece.
///
/// Text that could still become the block's opening is held until it does or cannot; the block's
/// own punctuation is never sent. The arguments sent for a call, joined, are the compact JSON
/// object the reply wrote, the same text a non-streamed answer carries.
struct ToolCallStream {
    /// One thing to send.
    enum Delta: Hashable, Sendable {
        /// Text of a reply that is not a tool-call block.
        case content(String)
        /// Call `index` begins: its tool's name (its arguments follow).
        case call(index: Int, name: String)
        /// More of call `index`'s arguments.
        case arguments(index: Int, String)
    }

    private enum Mode { case undecided, text, calls }

    private static let opening = Array("<tool_call>[".utf8)
    private static let nameKey = Array("{\"name\": \"".utf8)
    private static let argumentsKey = Array("\", \"arguments\": ".utf8)

    private var bytes: [UInt8] = []
    private var mode = Mode.undecided
    /// UTF-8 bytes of arguments sent so far, one entry per call whose name was sent.
    private var sent: [Int] = []

    /// The deltas `piece` (the reply's next final text) makes.
    mutating func append(_ piece: String) -> [Delta] {
        switch mode {
        case .text: return piece.isEmpty ? [] : [.content(piece)]
        case .undecided:
            bytes += piece.utf8
            if bytes.starts(with: Self.opening) {
                mode = .calls
                return callDeltas()
            }
            if Self.opening.starts(with: bytes) { return [] }
            mode = .text
            return [.content(String(decoding: bytes, as: UTF8.self))]
        case .calls:
            bytes += piece.utf8
            return callDeltas()
        }
    }

    /// What is left once the reply has ended: held text that never became a block.
    mutating func finish() -> [Delta] {
        guard mode == .undecided, !bytes.isEmpty else { return [] }
        mode = .text
        return [.content(String(decoding: bytes, as: UTF8.self))]
    }

    /// The calls a tool-call block cut off mid-way had begun (the token limit came first): each
    /// whose name is whole, with as much of its arguments as was written, which is what a stream
    /// of the same reply has sent. Nil for a reply that is not a tool-call block.
    static func begunCalls(in reply: String) -> [(name: String, arguments: String)]? {
        let bytes = Array(reply.utf8)
        guard bytes.starts(with: opening) else { return nil }
        return calls(in: bytes).map { ($0.name, String(decoding: $0.arguments, as: UTF8.self)) }
    }

    private mutating func callDeltas() -> [Delta] {
        var deltas: [Delta] = []
        for (index, call) in Self.calls(in: bytes).enumerated() {
            if index == sent.count {
                deltas.append(.call(index: index, name: call.name))
                sent.append(0)
            }
            if call.arguments.count > sent[index] {
                deltas.append(
                    .arguments(index: index, String(decoding: call.arguments.dropFirst(sent[index]), as: UTF8.self)))
                sent[index] = call.arguments.count
            }
        }
        return deltas
    }

    /// The calls of a block so far: those whose name is whole, with as much of their arguments
    /// as has been written (UTF-8).
    private static func calls(in bytes: [UInt8]) -> [(name: String, arguments: ArraySlice<UInt8>)] {
        var calls: [(name: String, arguments: ArraySlice<UInt8>)] = []
        var at = opening.count
        while at < bytes.count {
            if !calls.isEmpty {
                guard bytes[at] == UInt8(ascii: ",") else { break }
                at += 1
                if at < bytes.count && bytes[at] == UInt8(ascii: " ") { at += 1 }
            }
            guard bytes[at...].starts(with: nameKey) else { break }
            let nameStart = at + nameKey.count
            guard let nameEnd = stringEnd(bytes, from: nameStart) else { break }
            let quoted = [UInt8(ascii: "\"")] + bytes[nameStart..<nameEnd] + [UInt8(ascii: "\"")]
            guard let name = (try? JSONValue.parse(String(decoding: quoted, as: UTF8.self)))?.string else { break }
            let argumentsStart = nameEnd + argumentsKey.count
            guard bytes.count >= argumentsStart else {
                calls.append((name, []))
                break
            }
            let argumentsEnd = valueEnd(bytes, from: argumentsStart)
            calls.append((name, bytes[argumentsStart..<(argumentsEnd ?? bytes.count)]))
            guard let argumentsEnd, argumentsEnd < bytes.count, bytes[argumentsEnd] == UInt8(ascii: "}") else { break }
            at = argumentsEnd + 1
        }
        return calls
    }

    /// Where the JSON string whose content starts at `start` closes (its quote), nil while open.
    private static func stringEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var at = start
        while at < bytes.count {
            switch bytes[at] {
            case UInt8(ascii: "\\"): at += 2
            case UInt8(ascii: "\""): return at
            default: at += 1
            }
        }
        return nil
    }

    /// Just past the JSON object or array that opens at `start`, nil while it is open.
    private static func valueEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        var depth = 0
        var at = start
        while at < bytes.count {
            switch bytes[at] {
            case UInt8(ascii: "\""):
                guard let end = stringEnd(bytes, from: at + 1) else { return nil }
                at = end
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return at + 1 }
            default: break
            }
            at += 1
        }
        return nil
    }
}
