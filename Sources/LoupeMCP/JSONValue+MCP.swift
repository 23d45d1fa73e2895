import LoupeBase
import MCP

extension JSONValue {
    /// The value as the MCP SDK carries it: integral numbers as integers, a number JSON cannot
    /// write (NaN, infinity) as its name, as `loupe … --json` writes it.
    var mcpValue: Value {
        switch self {
        case .null: return .null
        case .bool(let flag): return .bool(flag)
        case .number(let number):
            guard number.isFinite else { return .string(number.isNaN ? "nan" : number > 0 ? "inf" : "-inf") }
            if number == number.rounded(), abs(number) < 9e15 { return .int(Int(number)) }
            return .double(number)
        case .string(let text): return .string(text)
        case .array(let items): return .array(items.map(\.mcpValue))
        case .object(let members):
            return .object(Dictionary(members.map { ($0.key, $0.value.mcpValue) }, uniquingKeysWith: { a, _ in a }))
        }
    }

    /// An argument as the SDK decoded it; binary data (which no schema of ours declares) as its
    /// description, so that it fails the type check with a readable message.
    init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let integer): self = .number(Double(integer))
        case .double(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .data(let mimeType, let data): self = .string("data:\(mimeType ?? "")(\(data.count) bytes)")
        case .array(let items): self = .array(items.map(JSONValue.init))
        case .object(let members): self = .object(JSONObject(members.map { ($0.key, JSONValue($0.value)) }))
        }
    }
}
