import Foundation
import LoupeBase

/// A JSON schema reduced to what constrained decoding enforces: a value's type and the bounds a
/// byte-by-byte matcher can keep. Built by ``init(schema:path:)``, which refuses, by name, every
/// keyword it would otherwise ignore, so a grammar never lets through a value its schema rejects.
///
/// What is kept: `type` (one name or a list), `properties`, `required`, `additionalProperties:
/// false`, `items`, `minItems`/`maxItems`, `minLength`/`maxLength`, `minimum`/`maximum` on
/// integers, `enum`, `const`, and the annotations (`description`, `title`, `default`,
/// `examples`, `$schema`). A schema of `{}` (or `true`) is any JSON value.
package indirect enum JSONSchemaNode: Hashable, Sendable {
    /// Any JSON value.
    case any
    /// An object with these properties (each at most once, in any order) and no others;
    /// `required` names those it must have.
    case object(properties: [Property], required: Set<String>)
    /// Any JSON object (`response_format: json_object`, `{"type": "object"}`).
    case anyObject
    case array(items: JSONSchemaNode, minItems: Int, maxItems: Int?)
    /// Length counted in Unicode scalars, as JSON Schema counts it.
    case string(minLength: Int, maxLength: Int?)
    case integer(minimum: Int64?, maximum: Int64?)
    case number
    case boolean
    case null
    /// Exactly one of these values, each written as its compact JSON.
    case oneOf([String])
    /// One of several types (`"type": ["string", "null"]`): the first byte of a JSON value
    /// names its type, so the matcher knows which at once.
    case union([JSONSchemaNode])

    /// A named property and its schema.
    package struct Property: Hashable, Sendable {
        package var name: String
        package var schema: JSONSchemaNode
    }

    /// This schema with every string that has no `maxLength` (or a larger one) limited to
    /// `limit` scalars: a subset of what it accepts, so a small model that repeats itself
    /// inside a string is made to close it.
    package func limitingStrings(to limit: Int) -> JSONSchemaNode {
        switch self {
        case .string(let minimum, let maximum):
            return .string(minLength: minimum, maxLength: max(minimum, min(maximum ?? limit, limit)))
        case .object(let properties, let required):
            return .object(
                properties: properties.map { Property(name: $0.name, schema: $0.schema.limitingStrings(to: limit)) },
                required: required)
        case .array(let items, let minimum, let maximum):
            return .array(items: items.limitingStrings(to: limit), minItems: minimum, maxItems: maximum)
        case .union(let nodes): return .union(nodes.map { $0.limitingStrings(to: limit) })
        case .any, .anyObject, .integer, .number, .boolean, .null, .oneOf: return self
        }
    }

    private static let annotations: Set<String> = [
        "description", "title", "default", "examples", "$schema", "$id", "$comment",
    ]

    /// Compiles `schema`.
    ///
    /// - Throws: ``GrammarError`` naming the keyword and its path for every feature not enforced
    ///   (`pattern`, `format`, `anyOf`, `$ref`, bounds on non-integers, additional properties…).
    package init(schema: JSONValue, path: String = "") throws(GrammarError) {
        switch schema {
        case .bool(true): self = .any
        case .bool(false): throw GrammarError(path: path, "the schema 'false' accepts no value")
        case .object(let members): self = try Self.compile(members, path: path)
        default: throw GrammarError(path: path, "a schema is an object or a boolean, found \(schema.compactJSON)")
        }
    }

    private static func compile(_ schema: JSONObject, path: String) throws(GrammarError) -> JSONSchemaNode {
        var used = annotations
        if let values = schema["enum"] {
            guard case .array(let list) = values, !list.isEmpty else {
                throw GrammarError(path: path + "/enum", "enum must be a non-empty array")
            }
            try refuseOthers(schema, used: used.union(["enum", "type"]), path: path)
            return .oneOf(Array(Set(list.map(\.compactJSON))).sorted())
        }
        if let value = schema["const"] {
            try refuseOthers(schema, used: used.union(["const", "type"]), path: path)
            return .oneOf([value.compactJSON])
        }
        var types: [String]
        switch schema["type"] {
        case nil: types = []
        case .string(let name)?: types = [name]
        case .array(let names)?:
            types = []
            for name in names {
                guard let text = name.string else {
                    throw GrammarError(path: path + "/type", "type names are strings, found \(name.compactJSON)")
                }
                types.append(text)
            }
        case let other?:
            throw GrammarError(path: path + "/type", "type is a name or a list of names, found \(other.compactJSON)")
        }
        used.insert("type")
        if types.isEmpty {
            // No type: only the empty schema (any value) is enforceable without guessing one.
            try refuseOthers(schema, used: used, path: path)
            return .any
        }
        var nodes: [JSONSchemaNode] = []
        for name in types {
            switch name {
            case "object":
                used.formUnion(["properties", "required", "additionalProperties"])
                nodes.append(try object(schema, path: path))
            case "array":
                used.formUnion(["items", "minItems", "maxItems"])
                let items = try schema["items"].map { value throws(GrammarError) in
                    try JSONSchemaNode(schema: value, path: path + "/items")
                }
                let minimum = try count(schema, "minItems", path: path) ?? 0
                let maximum = try count(schema, "maxItems", path: path)
                if let maximum, maximum < minimum {
                    throw GrammarError(path: path, "maxItems \(maximum) is below minItems \(minimum)")
                }
                nodes.append(.array(items: items ?? .any, minItems: minimum, maxItems: maximum))
            case "string":
                used.formUnion(["minLength", "maxLength"])
                let minimum = try count(schema, "minLength", path: path) ?? 0
                let maximum = try count(schema, "maxLength", path: path)
                if let maximum, maximum < minimum {
                    throw GrammarError(path: path, "maxLength \(maximum) is below minLength \(minimum)")
                }
                nodes.append(.string(minLength: minimum, maxLength: maximum))
            case "integer":
                used.formUnion(["minimum", "maximum"])
                let minimum = try bound(schema, "minimum", path: path)
                let maximum = try bound(schema, "maximum", path: path)
                if let minimum, let maximum, maximum < minimum {
                    throw GrammarError(path: path, "maximum \(maximum) is below minimum \(minimum)")
                }
                nodes.append(.integer(minimum: minimum, maximum: maximum))
            case "number":
                if schema["minimum"] != nil || schema["maximum"] != nil {
                    throw GrammarError(
                        path: path, "minimum and maximum are enforced on integers only, not on type 'number'")
                }
                nodes.append(.number)
            case "boolean": nodes.append(.boolean)
            case "null": nodes.append(.null)
            default:
                throw GrammarError(
                    path: path + "/type",
                    "unknown type '\(name)' (object, array, string, integer, number, boolean, null)")
            }
        }
        try refuseOthers(schema, used: used, path: path)
        if nodes.count == 1 { return nodes[0] }
        // "integer" and "number" both start with a digit: keep the wider.
        if nodes.contains(.number) { nodes.removeAll { if case .integer = $0 { true } else { false } } }
        return nodes.count == 1 ? nodes[0] : .union(nodes)
    }

    private static func object(_ schema: JSONObject, path: String) throws(GrammarError) -> JSONSchemaNode {
        switch schema["additionalProperties"] {
        case nil, .bool(false)?: break
        case let other?:
            throw GrammarError(
                path: path + "/additionalProperties",
                "additional properties (\(other.compactJSON)) are not supported: list every property, "
                    + "or use additionalProperties: false")
        }
        guard let declared = schema["properties"] else {
            guard schema["required"] == nil else {
                throw GrammarError(path: path + "/required", "required names properties, but none are declared")
            }
            // additionalProperties false with no properties: only {}.
            return schema["additionalProperties"] == .bool(false) ? .object(properties: [], required: []) : .anyObject
        }
        guard case .object(let members) = declared else {
            throw GrammarError(path: path + "/properties", "properties must be an object")
        }
        var properties: [Property] = []
        for (name, value) in members {
            properties.append(
                Property(name: name, schema: try JSONSchemaNode(schema: value, path: path + "/properties/" + name)))
        }
        var required: Set<String> = []
        if let list = schema["required"] {
            guard case .array(let names) = list else {
                throw GrammarError(path: path + "/required", "required must be an array of names")
            }
            for name in names {
                guard let text = name.string, members[text] != nil else {
                    throw GrammarError(
                        path: path + "/required", "required names \(name.compactJSON), which is not a property")
                }
                required.insert(text)
            }
        }
        return .object(properties: properties, required: required)
    }

    private static func count(_ schema: JSONObject, _ key: String, path: String) throws(GrammarError) -> Int? {
        guard let value = schema[key] else { return nil }
        guard let number = value.int, number >= 0, number <= 1_000_000 else {
            throw GrammarError(
                path: path + "/" + key, "\(key) must be a whole number from 0, found \(value.compactJSON)")
        }
        return Int(number)
    }

    private static func bound(_ schema: JSONObject, _ key: String, path: String) throws(GrammarError) -> Int64? {
        guard let value = schema[key] else { return nil }
        guard case .number(let number) = value, number.isFinite else {
            throw GrammarError(path: path + "/" + key, "\(key) must be a number, found \(value.compactJSON)")
        }
        // An integer at least 1.5 is at least 2; at most 1.5, at most 1.
        let rounded = key == "minimum" ? number.rounded(.up) : number.rounded(.down)
        guard abs(rounded) < 1e15 else {
            throw GrammarError(path: path + "/" + key, "\(key) \(value.compactJSON) is beyond ±10^15")
        }
        return Int64(rounded)
    }

    private static func refuseOthers(_ schema: JSONObject, used: Set<String>, path: String) throws(GrammarError) {
        for (key, _) in schema where !used.contains(key) {
            throw GrammarError(path: path + "/" + key, "'\(key)' is not supported by constrained decoding")
        }
    }
}
