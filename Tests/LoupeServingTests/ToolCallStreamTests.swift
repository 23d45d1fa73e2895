import LoupeBase
import LoupeModels
import Testing

@testable import LoupeServing

/// The streamed reading of a reply with tools offered: text passes as content, a tool-call block
/// becomes each call's name and then its arguments, however the reply is cut into pieces, and
/// the arguments joined are what the non-streamed answer carries.
@Suite struct ToolCallStreamTests {
    /// A block of `calls` as SmolLM2 writes it under the tool grammar.
    static func block(_ calls: [(name: String, arguments: JSONValue)]) -> String {
        let entries = calls.map { "{\"name\": \"\($0.name)\", \"arguments\": \($0.arguments.compactJSON)}" }
        return "<tool_call>[" + entries.joined(separator: ", ") + "]</tool_call>"
    }

    static let weather: JSONValue = .object(["city": "Zürich", "unit": "c"])
    /// Braces, brackets, quotes and a backslash inside strings: none of them ends the object.
    static let tricky: JSONValue = .object(["note": "a \"}\" and ] and \\ then {", "list": .array([.number(1), "]"])])

    /// What the deltas say, rebuilt: content, and each call's name and joined arguments.
    static func replay(_ deltas: [ToolCallStream.Delta]) -> (content: String, calls: [(String, String)]) {
        var content = ""
        var calls: [(String, String)] = []
        for delta in deltas {
            switch delta {
            case .content(let text): content += text
            case .call(let index, let name):
                #expect(index == calls.count, "calls are numbered in order")
                calls.append((name, ""))
            case .arguments(let index, let text):
                #expect(index == calls.count - 1, "arguments follow their own call's name")
                calls[index].1 += text
            }
        }
        return (content, calls)
    }

    /// Feeds `pieces` then finishes.
    static func run(_ pieces: [String]) -> [ToolCallStream.Delta] {
        var stream = ToolCallStream()
        return pieces.flatMap { stream.append($0) } + stream.finish()
    }

    @Test func plainTextPassesAsContentAtOnce() {
        var stream = ToolCallStream()
        #expect(stream.append("Hello") == [.content("Hello")])
        #expect(stream.append(", world") == [.content(", world")])
        #expect(stream.append("") == [])
        #expect(stream.finish() == [])
    }

    @Test func textThatCouldOpenABlockIsHeldUntilItCannot() {
        var stream = ToolCallStream()
        #expect(stream.append("<tool") == [])
        #expect(stream.append("_c") == [])
        #expect(stream.append("ar> is a tag") == [.content("<tool_car> is a tag")])
        // A reply that ends while still a possible opening is text.
        var short = ToolCallStream()
        #expect(short.append("<tool_call>") == [])
        #expect(short.finish() == [.content("<tool_call>")])
    }

    @Test func aCallSplitAtEveryBoundaryGivesTheSameCall() throws {
        let reply = Self.block([("get_weather", Self.weather)])
        let expected = try #require(try SmolLM2ToolFormat.calls(in: reply))
        let characters = Array(reply)
        for cut in 0...characters.count {
            let pieces = [String(characters[..<cut]), String(characters[cut...])]
            let (content, calls) = Self.replay(Self.run(pieces))
            #expect(content.isEmpty, "cut at \(cut)")
            #expect(calls.map(\.0) == ["get_weather"], "cut at \(cut)")
            #expect(calls.map(\.1) == expected.map(\.arguments), "cut at \(cut)")
        }
        // One character (one to three UTF-8 bytes) at a time: the name comes once, whole.
        let deltas = Self.run(characters.map { String($0) })
        #expect(deltas.filter { if case .call = $0 { true } else { false } } == [.call(index: 0, name: "get_weather")])
        #expect(Self.replay(deltas).calls.map(\.1) == expected.map(\.arguments))
    }

    @Test func severalCallsWithTrickyStringsKeepTheirOrderAndArguments() throws {
        let reply = Self.block([("get_weather", Self.weather), ("note", Self.tricky), ("get_weather", .object([:]))])
        let expected = try #require(try SmolLM2ToolFormat.calls(in: reply))
        #expect(expected.count == 3)
        for size in [1, 2, 3, 7, 64, reply.count] {
            var pieces: [String] = []
            var rest = Substring(reply)
            while !rest.isEmpty {
                pieces.append(String(rest.prefix(size)))
                rest = rest.dropFirst(size)
            }
            let (content, calls) = Self.replay(Self.run(pieces))
            #expect(content.isEmpty, "pieces of \(size)")
            #expect(calls.map(\.0) == expected.map(\.name), "pieces of \(size)")
            #expect(calls.map(\.1) == expected.map(\.arguments), "pieces of \(size)")
        }
    }

    /// A reply cut by the token limit inside a call's arguments has sent the name and a prefix
    /// of the arguments that is not a JSON object: the client, told `length`, can see that.
    @Test func aCutCallHasSentItsNameAndAnIncompleteArgumentPrefix() throws {
        let reply = Self.block([("get_weather", Self.weather)])
        let full = Self.weather.compactJSON
        let cut = String(reply.prefix(reply.count - "\"}}]</tool_call>".count - 2))
        let (content, calls) = Self.replay(Self.run([cut]))
        #expect(content.isEmpty)
        #expect(calls.map(\.0) == ["get_weather"])
        let arguments = try #require(calls.first?.1)
        #expect(!arguments.isEmpty && full.hasPrefix(arguments) && arguments != full)
        #expect((try? JSONValue.parse(arguments)) == nil, "the cut arguments do not parse")
    }

    @Test func aMalformedBlockSendsOnlyTheCallsBeforeTheFault() {
        // The second entry has no "name" key: the stream stops at it.
        let reply = "<tool_call>[{\"name\": \"a\", \"arguments\": {}}, {\"nom\": \"b\", \"arguments\": {}}]</tool_call>"
        let (content, calls) = Self.replay(Self.run(reply.map { String($0) }))
        #expect(content.isEmpty)
        #expect(calls.map(\.0) == ["a"] && calls.map(\.1) == ["{}"])
        // Nothing but the opening's punctuation: no call, no content.
        #expect(Self.run(["<tool_call>[oops]</tool_call>"]) == [])
        // A name with an escaped quote is unescaped once whole.
        let escaped = "<tool_call>[{\"name\": \"say \\\"hi\\\"\", \"arguments\": {}}]</tool_call>"
        #expect(Self.replay(Self.run([escaped])).calls.map(\.0) == ["say \"hi\""])
    }
}
