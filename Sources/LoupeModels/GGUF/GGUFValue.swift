/// One GGUF metadata value, by its on-disk value type (0–12 in the GGUF spec).
package enum GGUFValue: Sendable, Equatable {
    case uint8(UInt8)
    case int8(Int8)
    case uint16(UInt16)
    case int16(Int16)
    case uint32(UInt32)
    case int32(Int32)
    case float32(Float)
    case bool(Bool)
    case string(String)
    /// Elements of one type; GGUF arrays may nest.
    case array([GGUFValue])
    case uint64(UInt64)
    case int64(Int64)
    case float64(Double)

    /// The value's GGUF type name, for errors: `uint32`, `string`, `array of string`.
    package var typeName: String {
        switch self {
        case .uint8: "uint8"
        case .int8: "int8"
        case .uint16: "uint16"
        case .int16: "int16"
        case .uint32: "uint32"
        case .int32: "int32"
        case .float32: "float32"
        case .bool: "bool"
        case .string: "string"
        case .array(let elements): elements.first.map { "array of \($0.typeName)" } ?? "empty array"
        case .uint64: "uint64"
        case .int64: "int64"
        case .float64: "float64"
        }
    }

    /// The value as an `Int` when it is an integer of any width that fits, else nil.
    package var integerValue: Int? {
        switch self {
        case .uint8(let value): Int(value)
        case .int8(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int16(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        case .int64(let value): Int(value)
        default: nil
        }
    }

    /// The value as a `Float` when it is a float32 or float64, else nil.
    package var floatValue: Float? {
        switch self {
        case .float32(let value): value
        case .float64(let value): Float(value)
        default: nil
        }
    }

    /// The text when the value is a string, else nil.
    package var stringValue: String? {
        if case .string(let text) = self { text } else { nil }
    }
}

/// GGUF value types by their on-disk number.
enum GGUFValueType: UInt32 {
    case uint8 = 0
    case int8 = 1
    case uint16 = 2
    case int16 = 3
    case uint32 = 4
    case int32 = 5
    case float32 = 6
    case bool = 7
    case string = 8
    case array = 9
    case uint64 = 10
    case int64 = 11
    case float64 = 12

    /// The fewest bytes one value of this type takes: its width, a string's 8-byte length, or an
    /// array's 4-byte type and 8-byte count. Counts are bounded by the bytes left divided by this.
    var minimumBytes: Int {
        switch self {
        case .uint8, .int8, .bool: 1
        case .uint16, .int16: 2
        case .uint32, .int32, .float32: 4
        case .uint64, .int64, .float64, .string: 8
        case .array: 12
        }
    }
}
