import Foundation
import LoupeBase

/// What a reply may be when tools are offered (OpenAI's `tool_choice`, less `none`, which
/// needs no grammar).
package enum ToolChoice: Hashable, Sendable {
    /// Plain text, or a tool-call block (an empty list `[]` included).
    case auto
    /// A tool-call block with at least one call.
    case required
    /// A tool-call block calling this tool (and only it).
    case named(String)
}

/// The language a constrained generation must stay in, checked byte by byte by
/// ``GrammarMatcher``: a JSON value valid for a schema (`response_format`), or SmolLM2's
/// tool-call block `<tool_call>[{"name": …, "arguments": {…}}, …]</tool_call>` whose every
/// call names an offered tool and whose arguments are valid for that tool's schema.
///
/// JSON is written compactly, with at most one space after `:` and `,`; numbers have at most
/// 15 digits before and 15 after the point. Outputs are therefore a subset of the values the
/// schema accepts, and every one of them parses and validates.
package struct Grammar: Hashable, Sendable {
    enum Root: Hashable, Sendable {
        case value(JSONSchemaNode)
        case toolCalls(ToolCallGrammar)
    }

    let root: Root

    /// A JSON value valid for `schema` (`response_format: {type: json_schema}`).
    ///
    /// - Throws: ``GrammarError`` naming a schema feature constrained decoding does not enforce.
    package static func json(schema: JSONValue) throws(GrammarError) -> Grammar {
        Grammar(root: .value(try JSONSchemaNode(schema: schema)))
    }

    /// Any JSON object (`response_format: {type: json_object}`).
    package static let jsonObject = Grammar(root: .value(.anyObject))

    /// A SmolLM2 tool-call block for `tools` under `choice`, with at most `maxCalls` calls, and
    /// strings in arguments at most `stringLimit` scalars long where their schema allows more
    /// (nil: as the schema says).
    ///
    /// - Throws: ``GrammarError`` for a tool schema feature not enforced (its path starts with the
    ///   tool's name), no tools, two tools of one name, or a named choice that is not offered.
    package static func toolCalls(
        _ tools: [ToolSpec], choice: ToolChoice = .auto, maxCalls: Int = 8, stringLimit: Int? = nil
    ) throws(GrammarError) -> Grammar {
        guard !tools.isEmpty else { throw GrammarError(path: "", "no tools to call") }
        var compiled: [ToolCallGrammar.Tool] = []
        for tool in tools {
            guard !compiled.contains(where: { $0.name == tool.name }) else {
                throw GrammarError(path: "/" + tool.name, "two tools are named '\(tool.name)'")
            }
            if case .named(let only) = choice, only != tool.name { continue }
            var arguments = try JSONSchemaNode(schema: tool.parameters, path: "/" + tool.name)
            if let stringLimit { arguments = arguments.limitingStrings(to: stringLimit) }
            switch arguments {
            case .object, .anyObject, .any: break
            default:
                throw GrammarError(path: "/" + tool.name, "a tool's parameters are an object schema")
            }
            // Arguments are an object, whatever `{}` would allow.
            compiled.append(
                ToolCallGrammar.Tool(
                    name: tool.name,
                    encodedName: Array(JSONValue.string(tool.name).compactJSON.utf8.dropFirst().dropLast()),
                    arguments: arguments == .any ? .anyObject : arguments))
        }
        if case .named(let only) = choice, compiled.isEmpty {
            throw GrammarError(path: "", "tool_choice names '\(only)', which is not among the tools")
        }
        return Grammar(
            root: .toolCalls(
                ToolCallGrammar(tools: compiled, allowsText: choice == .auto, maxCalls: max(1, maxCalls))))
    }
}

/// SmolLM2's tool-call block, as ``Grammar/toolCalls(_:choice:maxCalls:)`` builds it.
struct ToolCallGrammar: Hashable, Sendable {
    struct Tool: Hashable, Sendable {
        var name: String
        /// The name as it is written inside a JSON string (escapes applied), UTF-8.
        var encodedName: [UInt8]
        var arguments: JSONSchemaNode
    }

    var tools: [Tool]
    /// `auto`: the reply may be plain text instead, or an empty list.
    var allowsText: Bool
    var maxCalls: Int

    static let opening = Array("<tool_call>[".utf8)
    static let closing = Array("]</tool_call>".utf8)
    static let nameKey = Array("\"name\": \"".utf8)
    static let argumentsKey = Array("\", \"arguments\": ".utf8)
}
