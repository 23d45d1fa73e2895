import Foundation
import LoupeBase

package struct ToolCall: Hashable, Sendable {
    package var id: String?
    package var name: String
    /// The arguments as the source wrote them (chat-completions sends a JSON string that may
    /// not parse: kept raw, and `argumentsError` says why it does not).
    package var arguments: String
    package var argumentsError: String?
    package var result: String?
    package var error: String?

    package init(id: String?, name: String, arguments: String, result: String? = nil, error: String? = nil) {
        self.id = id
        self.name = name
        self.arguments = arguments
        self.result = result
        self.error = error
        if !arguments.isEmpty {
            do { _ = try JSONValue.parse(arguments) } catch {
                argumentsError = "arguments are not valid JSON: \(error)"
            }
        }
    }
}
