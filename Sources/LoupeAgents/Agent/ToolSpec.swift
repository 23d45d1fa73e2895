import Foundation
import LoupeBase

extension ToolSpec {
    /// The chat-completions `tools[]` entry.
    var openAI: JSONValue {
        .object([
            "type": "function",
            "function": .object([
                "name": .string(name), "description": .string(description), "parameters": parameters,
            ]),
        ])
    }
}
