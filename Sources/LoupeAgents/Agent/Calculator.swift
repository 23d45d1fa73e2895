import Foundation

/// A safe arithmetic evaluator for the agent's `calculator` tool: numbers, `+ - * / % ^` (and
/// `**`), parentheses, unary signs, the constants `pi` and `e`, and a few functions. It parses;
/// it never evaluates code. Errors say what is wrong and at which column.
package enum Calculator {
    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    static let functions: [String: (arity: ClosedRange<Int>, apply: @Sendable ([Double]) -> Double)] = [
        "sqrt": (1...1, { sqrt($0[0]) }), "abs": (1...1, { abs($0[0]) }), "exp": (1...1, { exp($0[0]) }),
        "ln": (1...1, { log($0[0]) }), "log": (1...1, { log10($0[0]) }), "log2": (1...1, { log2($0[0]) }),
        "sin": (1...1, { sin($0[0]) }), "cos": (1...1, { cos($0[0]) }), "tan": (1...1, { tan($0[0]) }),
        "floor": (1...1, { floor($0[0]) }), "ceil": (1...1, { ceil($0[0]) }),
        "round": (1...2, { $0.count == 1 ? $0[0].rounded() : ($0[0] * pow(10, $0[1])).rounded() / pow(10, $0[1]) }),
        "min": (1...64, { $0.min()! }), "max": (1...64, { $0.max()! }),
    ]
    static let constants: [String: Double] = ["pi": .pi, "e": M_E]

    package static func evaluate(_ expression: String) throws(Failure) -> Double {
        guard expression.utf8.count <= 1_000 else { throw Failure(message: "expression longer than 1000 characters") }
        var parser = Parser(Array(expression.unicodeScalars))
        let value = try parser.expression(depth: 0)
        parser.skipSpace()
        if parser.index < parser.scalars.count {
            throw Failure(message: "unexpected '\(parser.scalars[parser.index])' at column \(parser.index + 1)")
        }
        guard value.isFinite else { throw Failure(message: "the result is not a finite number") }
        return value
    }

    /// A number as a person writes it: integers without ".0", others to 12 significant digits.
    package static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.12g", value)
    }

    /// The longest run of `text` that reads as arithmetic (digits with operators or functions),
    /// or nil: how the offline policy finds the expression in a question.
    package static func expression(in text: String) -> String? {
        let allowed = CharacterSet(charactersIn: "0123456789.+-*/%^(), ")
        var best: Substring?
        var start: String.Index?
        var index = text.startIndex
        func close(at end: String.Index) {
            guard let s = start else { return }
            let candidate = text[s..<end].trimmingCharacters(in: CharacterSet(charactersIn: " ,.?"))
            let hasDigit = candidate.contains { $0.isNumber }
            let hasOperator = candidate.contains { "+-*/%^(".contains($0) }
            if hasDigit, hasOperator, parses(candidate), candidate.count > (best?.count ?? 0) {
                best = Substring(candidate)
            }
            start = nil
        }
        let names: [String] = (Array(functions.keys) + Array(constants.keys)).sorted { $0.count > $1.count }
        let longestName = names.first?.count ?? 0
        let initials = Set(names.compactMap(\.first))
        /// The function or constant that starts at `index`, a word's first letter.
        func name(at index: String.Index) -> String? {
            // Only the next few characters can match a name: lowercasing the whole rest of the text
            // here made the scan quadratic in the question's length (320k characters took 19 s).
            let rest = text[index...].prefix(longestName + 1).lowercased()
            for name in names where rest.hasPrefix(name) {
                let after = rest.dropFirst(name.count).first
                if after == nil || !after!.isLetter { return name }
            }
            return nil
        }
        var previousIsLetter = false
        while index < text.endIndex {
            let character = text[index]
            let isLetter = character.isLetter
            // Names are looked up once per word, and only for words whose initial starts one.
            if isLetter, !previousIsLetter, character.lowercased().first.map(initials.contains) == true,
                let name = name(at: index)
            {
                if start == nil { start = index }
                index = text.index(index, offsetBy: name.count)
                previousIsLetter = true
                continue
            }
            previousIsLetter = isLetter
            let scalar = character.unicodeScalars.first!
            if allowed.contains(scalar) && character.unicodeScalars.count == 1 {
                if start == nil, character != " " { start = index }
            } else {
                close(at: index)
            }
            index = text.index(after: index)
        }
        close(at: text.endIndex)
        return best.map(String.init)
    }

    /// True when `text` is well-formed arithmetic, even if evaluating it fails (7/0 is a
    /// question for the calculator, which will say why it has no answer).
    static func parses(_ text: String) -> Bool {
        do {
            _ = try evaluate(text)
            return true
        } catch {
            return error.message.hasPrefix("division by zero") || error.message.hasPrefix("the result is not")
        }
    }

    private struct Parser {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        mutating func skipSpace() {
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        }

        mutating func peek() -> Unicode.Scalar? {
            skipSpace()
            return index < scalars.count ? scalars[index] : nil
        }

        func failure(_ what: String) -> Failure {
            index < scalars.count
                ? Failure(message: "\(what): unexpected '\(scalars[index])' at column \(index + 1)")
                : Failure(message: "\(what): the expression ended early")
        }

        mutating func expression(depth: Int) throws(Failure) -> Double {
            guard depth < 64 else { throw Failure(message: "parentheses nested more than 64 deep") }
            var value = try term(depth: depth)
            while let op = peek(), op == "+" || op == "-" {
                index += 1
                let rhs = try term(depth: depth)
                value = op == "+" ? value + rhs : value - rhs
            }
            return value
        }

        mutating func term(depth: Int) throws(Failure) -> Double {
            var value = try power(depth: depth)
            while let op = peek(), op == "*" || op == "/" || op == "%" {
                if op == "*", index + 1 < scalars.count, scalars[index + 1] == "*" { break }
                let column = index + 1
                index += 1
                let rhs = try power(depth: depth)
                if op != "*" && rhs == 0 { throw Failure(message: "division by zero at column \(column)") }
                value = op == "*" ? value * rhs : op == "/" ? value / rhs : value.truncatingRemainder(dividingBy: rhs)
            }
            return value
        }

        mutating func power(depth: Int) throws(Failure) -> Double {
            let base = try unary(depth: depth)
            guard let op = peek() else { return base }
            if op == "^" {
                index += 1
            } else if op == "*", index + 1 < scalars.count, scalars[index + 1] == "*" {
                index += 2
            } else {
                return base
            }
            return pow(base, try power(depth: depth + 1))  // right-associative
        }

        mutating func unary(depth: Int) throws(Failure) -> Double {
            guard let c = peek() else { throw failure("expected a number") }
            if c == "-" || c == "+" {
                index += 1
                guard depth < 64 else { throw Failure(message: "too many signs in a row") }
                let value = try unary(depth: depth + 1)
                return c == "-" ? -value : value
            }
            return try primary(depth: depth)
        }

        mutating func primary(depth: Int) throws(Failure) -> Double {
            guard let c = peek() else { throw failure("expected a number") }
            if c == "(" {
                index += 1
                let value = try expression(depth: depth + 1)
                guard peek() == ")" else { throw failure("expected ')'") }
                index += 1
                return value
            }
            if c.properties.numericType != nil || c == "." {
                let start = index
                while index < scalars.count, scalars[index].properties.numericType != nil || scalars[index] == "." {
                    index += 1
                }
                // An exponent: 1e-3, 2E5.
                if index < scalars.count, scalars[index] == "e" || scalars[index] == "E", index + 1 < scalars.count,
                    scalars[index + 1].properties.numericType != nil || "+-".unicodeScalars.contains(scalars[index + 1])
                {
                    index += 2
                    while index < scalars.count, scalars[index].properties.numericType != nil { index += 1 }
                }
                let text = String(String.UnicodeScalarView(scalars[start..<index]))
                guard let value = Double(text) else {
                    throw Failure(message: "'\(text)' at column \(start + 1) is not a number")
                }
                return value
            }
            if c.properties.isAlphabetic {
                let start = index
                while index < scalars.count,
                    scalars[index].properties.isAlphabetic || scalars[index].properties.numericType != nil
                {
                    index += 1
                }
                let name = String(String.UnicodeScalarView(scalars[start..<index])).lowercased()
                if let constant = Calculator.constants[name] { return constant }
                guard let function = Calculator.functions[name] else {
                    throw Failure(message: "unknown name '\(name)' at column \(start + 1)")
                }
                guard peek() == "(" else { throw failure("expected '(' after \(name)") }
                index += 1
                var arguments = [try expression(depth: depth + 1)]
                while peek() == "," {
                    index += 1
                    arguments.append(try expression(depth: depth + 1))
                }
                guard peek() == ")" else { throw failure("expected ')'") }
                index += 1
                guard function.arity.contains(arguments.count) else {
                    throw Failure(
                        message: "\(name) takes \(function.arity.lowerBound) argument(s), got \(arguments.count)")
                }
                return function.apply(arguments)
            }
            throw failure("expected a number")
        }
    }
}
