import Foundation
import LoupeBase

/// A tool as a model sees it: a name, what it does, and its arguments' JSON schema.
package struct ToolSpec: Hashable, Sendable {
    package var name: String
    package var description: String
    package var parameters: JSONValue

    package init(name: String, description: String, parameters: JSONValue) {
        self.name = name
        self.description = description
        self.parameters = parameters
    }

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
