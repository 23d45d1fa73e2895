import Foundation
import LoupeAgents
import LoupeBase

/// A suite's items, read from JSON Lines: one object per line, blank lines skipped. An item's id
/// is its id field (text or number; the line number when the field is absent), and ids are unique.
package enum Dataset {
    package static func items(_ data: Data, spec: DatasetSpec) throws(SuiteError) -> [EvalItem] {
        let file = spec.path
        var items: [EvalItem] = []
        var seen: [String: Int] = [:]
        var line = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            line += 1
            let bytes = raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw
            guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { continue }
            let value: JSONValue
            do { value = try JSONValue.parse(Data(bytes)) } catch {
                throw SuiteError(file: file, line: line, column: error.column, "not valid JSON: \(error.message)")
            }
            guard var fields = value.object else {
                throw SuiteError(file: file, line: line, "each line must be a JSON object")
            }
            let id: String
            switch fields.removeValue(forKey: spec.idField) {
            case .string(let text)?: id = text
            case .number(let number)?: id = JSONValue.number(number).compactJSON
            case nil, .null?: id = String(line)
            case let other?:
                throw SuiteError(
                    file: file, line: line, "field '\(spec.idField)' must be text or a number, not \(other.compactJSON)"
                )
            }
            guard let inputValue = fields.removeValue(forKey: spec.inputField) else {
                throw SuiteError(
                    file: file, line: line,
                    "no '\(spec.inputField)' field (set dataset: {input: FIELD} in the suite to use another)")
            }
            let input = try Self.text(inputValue, field: spec.inputField, file: file, line: line)
            var targets: [String] = []
            switch fields.removeValue(forKey: spec.targetField) {
            case nil, .null?: break
            case .array(let values)?:
                for value in values {
                    targets.append(try Self.text(value, field: spec.targetField, file: file, line: line))
                }
            case let value?: targets = [try Self.text(value, field: spec.targetField, file: file, line: line)]
            }
            var confidence: Double?
            if let value = fields.removeValue(forKey: spec.confidenceField) {
                guard let number = value.number, (0...1).contains(number) else {
                    throw SuiteError(
                        file: file, line: line, "field '\(spec.confidenceField)' must be a number in [0, 1]")
                }
                confidence = number
            }
            if let first = seen[id] {
                throw SuiteError(file: file, line: line, "id '\(id)' is used again (first on line \(first))")
            }
            seen[id] = line
            items.append(
                EvalItem(id: id, input: input, targets: targets, confidence: confidence, metadata: fields, line: line))
        }
        guard !items.isEmpty else { throw SuiteError(file: file, "the dataset has no items") }
        return items
    }

    /// Text, a number, or a chat message list (its contents joined).
    private static func text(_ value: JSONValue, field: String, file: String, line: Int) throws(SuiteError) -> String {
        switch value {
        case .string(let text): return text
        case .number, .bool: return value.compactJSON
        case .array(let messages) where messages.allSatisfy({ $0["content"] != nil }):
            return messages.compactMap { $0["content"]?.string }.joined(separator: "\n")
        default:
            throw SuiteError(file: file, line: line, "field '\(field)' must be text, a number or a list of messages")
        }
    }
}
