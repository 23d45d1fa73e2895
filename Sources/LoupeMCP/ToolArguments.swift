import LoupeBase

/// A tool call's arguments, read by name with the type the tool's schema declares.
///
/// A missing required argument, one of another type or out of range throws a ``ToolCallError``
/// naming the argument, which the server answers as a JSON-RPC "invalid params" error.
package struct ToolArguments: Sendable {
    package let tool: String
    package let values: JSONObject

    package init(tool: String, values: JSONObject) {
        self.tool = tool
        self.values = values
    }

    /// Fails on an argument the schema does not declare, as `additionalProperties: false` says.
    func checkNames(against definition: ToolDefinition) throws(ToolCallError) {
        let declared = Set(definition.inputSchema["properties"]?.object?.keys ?? [])
        for name in values.keys where !declared.contains(name) {
            throw .invalidArguments(
                tool, "unknown argument '\(name)' (it takes \(declared.sorted().joined(separator: ", ")))")
        }
    }

    /// An integer argument; `range` bounds it.
    func integer(_ name: String, default fallback: Int64? = nil, in range: ClosedRange<Int64>? = nil)
        throws(ToolCallError) -> Int64
    {
        guard let value = values[name], !value.isNull else {
            guard let fallback else { throw .invalidArguments(tool, "'\(name)' is required (an integer)") }
            return fallback
        }
        guard case .number = value, let integer = value.int else {
            throw .invalidArguments(tool, "'\(name)' must be an integer, found \(value.compactJSON.prefix(40))")
        }
        if let range, !range.contains(integer) {
            throw .invalidArguments(
                tool, "'\(name)' is \(integer): use \(range.lowerBound) to \(range.upperBound)")
        }
        return integer
    }

    /// A string argument, nil when absent and not required.
    func string(_ name: String, required: Bool = false) throws(ToolCallError) -> String? {
        guard let value = values[name], !value.isNull else {
            if required { throw .invalidArguments(tool, "'\(name)' is required (a string)") }
            return nil
        }
        guard case .string(let text) = value else {
            throw .invalidArguments(tool, "'\(name)' must be a string, found \(value.compactJSON.prefix(40))")
        }
        return text
    }

    /// A boolean argument.
    func bool(_ name: String, default fallback: Bool) throws(ToolCallError) -> Bool {
        guard let value = values[name], !value.isNull else { return fallback }
        guard case .bool(let flag) = value else {
            throw .invalidArguments(tool, "'\(name)' must be true or false, found \(value.compactJSON.prefix(40))")
        }
        return flag
    }

    /// A pagination cursor a previous result gave as `next_cursor`: the offset it stands for.
    func cursor() throws(ToolCallError) -> Int {
        guard let text = try string("cursor") else { return 0 }
        guard text.hasPrefix("o"), let offset = Int(text.dropFirst()), offset >= 0 else {
            throw .invalidArguments(tool, "'cursor' \(text.prefix(40)) is not one a result gave (next_cursor)")
        }
        return offset
    }

    /// The cursor for the page that starts at `offset`.
    static func cursor(at offset: Int) -> String { "o\(offset)" }
}
