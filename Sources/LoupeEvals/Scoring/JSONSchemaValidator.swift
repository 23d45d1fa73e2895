import Foundation
import LoupeAgents
import LoupeBase

/// The part of JSON Schema (draft 2020-12) that structured-output checks use: `type` (one or a
/// list), `enum`, `const`, `properties`, `required`, `additionalProperties` (a boolean or a
/// schema), `items`, `minItems`/`maxItems`, `minLength`/`maxLength`, `pattern`,
/// `minimum`/`maximum`, `anyOf`. Other keywords are ignored, as the spec asks of unknown ones.
package enum JSONSchemaValidator {
    /// The first place `value` breaks `schema`, as "at /path: what", or nil when it is valid.
    package static func firstViolation(_ value: JSONValue, schema: JSONValue, path: String = "") -> String? {
        let at = "at \(path.isEmpty ? "/" : path): "
        if case .bool(let allowed) = schema { return allowed ? nil : at + "no value is allowed here" }
        guard let rules = schema.object else { return nil }
        if let type = rules["type"] {
            let names = type.array?.compactMap(\.string) ?? [type.string].compactMap { $0 }
            if !names.isEmpty, !names.contains(where: { matches(value, type: $0) }) {
                return at + "expected \(names.joined(separator: " or ")), found \(typeName(value))"
            }
        }
        if let options = rules["enum"]?.array, !options.contains(value) {
            return at + "\(value.compactJSON) is not one of \(JSONValue.array(options).compactJSON)"
        }
        if let constant = rules["const"], constant != value {
            return at + "expected \(constant.compactJSON)"
        }
        if let alternatives = rules["anyOf"]?.array,
            !alternatives.contains(where: { firstViolation(value, schema: $0, path: path) == nil })
        {
            return at + "matches none of anyOf's \(alternatives.count) schemas"
        }
        switch value {
        case .object(let members):
            for name in rules["required"]?.array?.compactMap(\.string) ?? [] where members[name] == nil {
                return at + "missing required property '\(name)'"
            }
            let properties = rules["properties"]?.object ?? [:]
            for name in members.keys.sorted() {
                let child = members[name]!
                if let schema = properties[name] {
                    if let violation = firstViolation(child, schema: schema, path: path + "/" + name) {
                        return violation
                    }
                } else if let extra = rules["additionalProperties"] {
                    if extra == .bool(false) { return at + "property '\(name)' is not allowed" }
                    if let violation = firstViolation(child, schema: extra, path: path + "/" + name) {
                        return violation
                    }
                }
            }
        case .array(let elements):
            if let least = rules["minItems"]?.number, Double(elements.count) < least {
                return at + "\(elements.count) items, fewer than \(JSONValue.number(least).compactJSON)"
            }
            if let most = rules["maxItems"]?.number, Double(elements.count) > most {
                return at + "\(elements.count) items, more than \(JSONValue.number(most).compactJSON)"
            }
            if let schema = rules["items"] {
                for (index, element) in elements.enumerated() {
                    if let violation = firstViolation(element, schema: schema, path: path + "/\(index)") {
                        return violation
                    }
                }
            }
        case .string(let text):
            if let least = rules["minLength"]?.number, Double(text.count) < least {
                return at + "\(text.count) characters, fewer than \(JSONValue.number(least).compactJSON)"
            }
            if let most = rules["maxLength"]?.number, Double(text.count) > most {
                return at + "\(text.count) characters, more than \(JSONValue.number(most).compactJSON)"
            }
            if let pattern = rules["pattern"]?.string, let regex = try? NSRegularExpression(pattern: pattern),
                regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) == nil
            {
                return at + "\(value.compactJSON) does not match \(pattern)"
            }
        case .number(let number):
            if let least = rules["minimum"]?.number, number < least { return at + "\(number) is below \(least)" }
            if let most = rules["maximum"]?.number, number > most { return at + "\(number) is above \(most)" }
        default: break
        }
        return nil
    }

    static func matches(_ value: JSONValue, type: String) -> Bool {
        switch (type, value) {
        case ("object", .object), ("array", .array), ("string", .string), ("boolean", .bool), ("null", .null),
            ("number", .number):
            true
        case ("integer", .number(let number)): number == number.rounded()
        default: false
        }
    }

    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
