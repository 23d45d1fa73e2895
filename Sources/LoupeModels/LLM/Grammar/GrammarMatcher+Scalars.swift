import Foundation

/// A JSON string being written: escapes, UTF-8 that must be well formed, and its length in
/// Unicode scalars against the schema's bounds.
struct StringState: Sendable {
    enum Step { case more, closed, rejected }

    var minLength: Int
    var maxLength: Int?
    /// Scalars so far.
    private var count = 0
    /// After a backslash.
    private var escaped = false
    /// Hex digits of a `\u` escape still to come.
    private var hexLeft = 0
    /// Continuation bytes of a UTF-8 sequence still to come, and the range the next one must be in.
    private var continuationLeft = 0
    private var nextLow: UInt8 = 0x80
    private var nextHigh: UInt8 = 0xBF

    init(minLength: Int, maxLength: Int?) {
        self.minLength = minLength
        self.maxLength = maxLength
    }

    private var hasRoom: Bool { maxLength.map { count < $0 } ?? true }

    mutating func feed(_ byte: UInt8) -> Step {
        if continuationLeft > 0 {
            guard byte >= nextLow && byte <= nextHigh else { return .rejected }
            continuationLeft -= 1
            nextLow = 0x80
            nextHigh = 0xBF
            return .more
        }
        if hexLeft > 0 {
            let isHex = (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
            // No \uD…: surrogates would be counted as two scalars where the schema counts one
            // (and a lone one is not text). Their range is written as UTF-8 instead.
            guard isHex, !(hexLeft == 4 && (byte == UInt8(ascii: "d") || byte == UInt8(ascii: "D"))) else {
                return .rejected
            }
            hexLeft -= 1
            return .more
        }
        if escaped {
            escaped = false
            switch byte {
            case UInt8(ascii: "u"): hexLeft = 4
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                break
            default: return .rejected
            }
            return .more
        }
        switch byte {
        case UInt8(ascii: "\""): return count >= minLength ? .closed : .rejected
        case 0x00..<0x20: return .rejected
        case UInt8(ascii: "\\"):
            guard hasRoom else { return .rejected }
            count += 1
            escaped = true
            return .more
        case 0x20..<0x80: break
        case 0xC2...0xDF: continuationLeft = 1
        case 0xE0:
            continuationLeft = 2
            nextLow = 0xA0
        case 0xED:
            continuationLeft = 2
            nextHigh = 0x9F
        case 0xE1...0xEF: continuationLeft = 2
        case 0xF0:
            continuationLeft = 3
            nextLow = 0x90
        case 0xF1...0xF3: continuationLeft = 3
        case 0xF4:
            continuationLeft = 3
            nextHigh = 0x8F
        default: return .rejected
        }
        guard hasRoom else { return .rejected }
        count += 1
        return .more
    }
}

/// A JSON number being written: its syntax, at most 15 digits in each part (3 in the
/// exponent), and for integers with bounds, only digits that can still end inside them.
struct NumberState: Sendable {
    enum Phase: Sendable { case start, minus, zero, integer, point, fraction, exponentMark, exponentSign, exponent }

    static let maxDigits = 15

    var integerOnly: Bool
    var minimum: Int64?
    var maximum: Int64?
    private var phase = Phase.start
    private var negative = false
    private var magnitude: Int64 = 0
    private var digits = 0
    private var fractionDigits = 0
    private var exponentDigits = 0

    init(integerOnly: Bool, minimum: Int64?, maximum: Int64?) {
        self.integerOnly = integerOnly
        self.minimum = minimum
        self.maximum = maximum
    }

    /// Whether the number may end here.
    var isFinal: Bool {
        switch phase {
        case .zero, .integer: inBounds(negative ? -magnitude : magnitude)
        case .fraction, .exponent: true
        default: false
        }
    }

    private func inBounds(_ value: Int64) -> Bool {
        (minimum.map { value >= $0 } ?? true) && (maximum.map { value <= $0 } ?? true)
    }

    /// Whether some magnitude in `low...high` with this sign is within the bounds.
    private func reaches(_ low: Int64, _ high: Int64, negative: Bool) -> Bool {
        let (from, to) = negative ? (-high, -low) : (low, high)
        return (minimum.map { to >= $0 } ?? true) && (maximum.map { from <= $0 } ?? true)
    }

    /// Whether an integer starting with `magnitude` (`digits` digits typed) can end in bounds.
    private func feasible(negative: Bool, magnitude: Int64, digits: Int) -> Bool {
        guard minimum != nil || maximum != nil else { return true }
        var scale: Int64 = 1
        for _ in 0..<Self.maxDigits { scale *= 10 }
        if digits == 0 { return reaches(0, scale - 1, negative: negative) }
        if reaches(magnitude, magnitude, negative: negative) { return true }
        guard magnitude > 0 else { return false }
        scale = 10
        for _ in digits..<Self.maxDigits {
            if reaches(magnitude * scale, magnitude * scale + scale - 1, negative: negative) { return true }
            scale *= 10
        }
        return false
    }

    mutating func feed(_ byte: UInt8) -> GrammarMatcher.Outcome {
        let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
        let digit = Int64(byte) - Int64(UInt8(ascii: "0"))
        switch phase {
        case .start, .minus:
            if phase == .start && byte == UInt8(ascii: "-") {
                guard feasible(negative: true, magnitude: 0, digits: 0) else { return .rejected }
                negative = true
                phase = .minus
                return .accepted
            }
            guard isDigit, feasible(negative: negative, magnitude: digit, digits: 1) else { return .rejected }
            magnitude = digit
            digits = 1
            phase = digit == 0 ? .zero : .integer
            return .accepted
        case .zero, .integer:
            if isDigit && phase == .integer {
                guard digits < Self.maxDigits,
                    feasible(negative: negative, magnitude: magnitude * 10 + digit, digits: digits + 1)
                else { return .rejected }
                magnitude = magnitude * 10 + digit
                digits += 1
                return .accepted
            }
            if !integerOnly && byte == UInt8(ascii: ".") {
                phase = .point
                return .accepted
            }
            if !integerOnly && (byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")) {
                phase = .exponentMark
                return .accepted
            }
            return isFinal ? .handOver : .rejected
        case .point, .fraction:
            if isDigit && fractionDigits < Self.maxDigits {
                fractionDigits += 1
                phase = .fraction
                return .accepted
            }
            guard phase == .fraction else { return .rejected }
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                phase = .exponentMark
                return .accepted
            }
            return .handOver
        case .exponentMark, .exponentSign, .exponent:
            if phase == .exponentMark && (byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")) {
                phase = .exponentSign
                return .accepted
            }
            if isDigit && exponentDigits < 3 {
                exponentDigits += 1
                phase = .exponent
                return .accepted
            }
            return phase == .exponent ? .handOver : .rejected
        }
    }
}
