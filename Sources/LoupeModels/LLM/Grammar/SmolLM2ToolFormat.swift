import Foundation
import LoupeBase

/// SmolLM2's published tool-calling convention (`huggingface/smollm`, `tools/smol_tools`; the
/// Ollama `smollm2` template): the tools listed in the system prompt inside `<tools>…</tools>`,
/// the assistant replying `<tool_call>[{"name": …, "arguments": {…}}, …]</tool_call>` (an
/// empty list for no call), and tool results fed back as a user turn wrapped in
/// `<tool_response>…</tool_response>`. ``Grammar/toolCalls(_:choice:maxCalls:)`` constrains
/// the replies to that shape.
package enum SmolLM2ToolFormat {
    /// A call read from a reply: the tool's name and its arguments as compact JSON.
    package struct Call: Hashable, Sendable {
        package var name: String
        package var arguments: String

        package init(name: String, arguments: String) {
            self.name = name
            self.arguments = arguments
        }
    }

    /// `instructions`, then the tools and how to call them.
    package static func systemPrompt(_ instructions: String, tools: [ToolSpec]) -> String {
        let listed = tools.map { tool in
            JSONValue.object([
                "name": .string(tool.name), "description": .string(tool.description), "parameters": tool.parameters,
            ]).compactJSON
        }
        return (instructions.isEmpty ? "" : instructions + "\n\n")
            + "You have access to the following tools:\n<tools>"
            + listed.joined(separator: "\n") + "</tools>\n\n"
            + "To call tools, reply with a list of calls and nothing else, in this format:\n"
            + #"<tool_call>[{"name": "tool_name", "arguments": {"argument": "value"}}]</tool_call>"#
            + "\nMake sure each argument has the type its tool asks for. "
            + "If no tool is needed, make the list of calls empty: <tool_call>[]</tool_call>"
    }

    /// An assistant turn that made `calls`.
    package static func render(_ calls: [Call]) -> String {
        let items = calls.map { call in
            let arguments = (try? JSONValue.parse(call.arguments))?.compactJSON ?? "{}"
            return "{\"name\": " + JSONValue.string(call.name).compactJSON + ", \"arguments\": " + arguments + "}"
        }
        return "<tool_call>[" + items.joined(separator: ", ") + "]</tool_call>"
    }

    /// The user turn that gives back a tool's result.
    package static func response(_ result: String) -> String { "<tool_response>" + result + "</tool_response>" }

    /// The calls of a reply that is a tool-call block, nil for a reply that is not one (text).
    ///
    /// - Throws: ``GrammarError`` for a block whose list does not parse or whose entries lack a
    ///   name or an arguments object (an unconstrained reply, or one cut off by the token limit).
    package static func calls(in reply: String) throws(GrammarError) -> [Call]? {
        let text = reply.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("<tool_call>") else { return nil }
        guard text.hasSuffix("</tool_call>") else {
            throw GrammarError(path: "", "the reply opens <tool_call> but does not close it")
        }
        let inner = String(text.dropFirst("<tool_call>".count).dropLast("</tool_call>".count))
        let list: JSONValue
        do { list = try JSONValue.parse(inner) } catch {
            throw GrammarError(path: "", "the tool-call block is not JSON: \(error)")
        }
        guard case .array(let entries) = list else {
            throw GrammarError(path: "", "the tool-call block is not a list")
        }
        var calls: [Call] = []
        for (index, entry) in entries.enumerated() {
            guard let name = entry["name"]?.string, let arguments = entry["arguments"], arguments.object != nil else {
                throw GrammarError(path: "/\(index)", "a call needs a \"name\" string and an \"arguments\" object")
            }
            calls.append(Call(name: name, arguments: arguments.compactJSON))
        }
        return calls
    }
}
