import Foundation

/// What an annotator judges, as a rubric file states it (`rubrics/*.yaml`): criteria of four
/// kinds, the targets they apply to, and which verdicts count as a pass when a judge's scores are
/// calibrated against them. Every option and boolean verdict has one key, unique in the rubric,
/// so the Review view labels with one keystroke (Langfuse's and LangSmith's score configs, with
/// keys).
package struct Rubric: Hashable, Sendable, Codable {
    /// What a rubric can be applied to.
    package enum Target: String, Hashable, Sendable, Codable, CaseIterable {
        case trace, step, session, answer, hit
    }

    package struct Option: Hashable, Sendable, Codable {
        package var name: String
        /// One character, unique in the rubric.
        package var key: String
        /// Whether this verdict counts as a pass (for calibration against a pass/fail scorer).
        package var passes: Bool

        package init(name: String, key: String, passes: Bool) {
            self.name = name
            self.key = key
            self.passes = passes
        }
    }

    package enum Kind: Hashable, Sendable, Codable {
        case categorical([Option])
        /// A value in `lower...upper` on a grid of `step`; `passAt`: values at or above it pass.
        case numeric(lower: Double, upper: Double, step: Double, passAt: Double?)
        case boolean(trueKey: String, falseKey: String)
        /// A free-text note: never required, never calibrated.
        case text

        package var name: String {
            switch self {
            case .categorical: "categorical"
            case .numeric: "numeric"
            case .boolean: "boolean"
            case .text: "text"
            }
        }
    }

    package struct Criterion: Hashable, Sendable, Codable {
        package var name: String
        package var description: String?
        package var kind: Kind

        package init(name: String, description: String? = nil, kind: Kind) {
            self.name = name
            self.description = description
            self.kind = kind
        }

        /// Whether an item counts as labelled only once this criterion has a value.
        package var required: Bool { kind != .text }

        /// Whether this criterion's verdicts say pass or fail (what a judge is calibrated against).
        package var passFails: Bool {
            switch kind {
            case .categorical(let options): options.contains(where: \.passes)
            case .numeric(_, _, _, let passAt): passAt != nil
            case .boolean: true
            case .text: false
            }
        }

        /// Whether a numeric criterion is typed with a single digit.
        package var takesDigit: Bool {
            guard case .numeric(let lower, let upper, let step, _) = kind else { return false }
            return step == 1 && lower >= 0 && upper <= 9 && lower == lower.rounded() && upper == upper.rounded()
        }

        /// The value `text` stands for, or why it is not one: an option's name (or key), a number on
        /// the grid, true/false (yes/no, or the keys), any text for a note.
        package func value(_ text: String) -> Result<Value, ValueError> {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            switch kind {
            case .categorical(let options):
                if let option = options.first(where: { $0.name == trimmed || $0.key == trimmed }) {
                    return .success(.option(option.name))
                }
                return .failure(
                    ValueError(
                        "'\(trimmed)' is not an option of \(name) (options: "
                            + options.map { "\($0.name) [\($0.key)]" }.joined(separator: ", ") + ")"))
            case .numeric(let lower, let upper, let step, _):
                guard let number = Double(trimmed), number.isFinite else {
                    return .failure(
                        ValueError("\(name) takes a number from \(Self.shown(lower)) to \(Self.shown(upper))"))
                }
                guard number >= lower, number <= upper else {
                    return .failure(
                        ValueError(
                            "\(Self.shown(number)) is outside \(name)'s range \(Self.shown(lower))…\(Self.shown(upper))"
                        ))
                }
                let steps = (number - lower) / step
                guard abs(steps - steps.rounded()) < 1e-9 else {
                    return .failure(
                        ValueError("\(name) moves in steps of \(Self.shown(step)) from \(Self.shown(lower))"))
                }
                return .success(.number(number))
            case .boolean(let trueKey, let falseKey):
                if trimmed == trueKey || ["true", "yes"].contains(trimmed.lowercased()) {
                    return .success(.boolean(true))
                }
                if trimmed == falseKey || ["false", "no"].contains(trimmed.lowercased()) {
                    return .success(.boolean(false))
                }
                return .failure(ValueError("\(name) is true or false (keys \(trueKey) and \(falseKey))"))
            case .text:
                return .success(.text(text))
            }
        }

        /// Whether `value` counts as a pass; nil when this criterion says nothing about passing.
        package func passes(_ value: Value) -> Bool? {
            switch (kind, value) {
            case (.categorical(let options), .option(let chosen)):
                guard options.contains(where: \.passes) else { return nil }
                return options.first { $0.name == chosen }?.passes
            case (.numeric(_, _, _, let passAt), .number(let number)): return passAt.map { number >= $0 }
            case (.boolean, .boolean(let verdict)): return verdict
            default: return nil
            }
        }

        /// A number as a rubric writes it: whole numbers without a decimal point.
        package static func shown(_ number: Double) -> String {
            number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
        }
    }

    /// A label's value.
    package enum Value: Hashable, Sendable, Codable, CustomStringConvertible {
        case option(String)
        case number(Double)
        case boolean(Bool)
        case text(String)

        package var description: String {
            switch self {
            case .option(let name): name
            case .number(let number): Criterion.shown(number)
            case .boolean(let verdict): verdict ? "true" : "false"
            case .text(let text): text
            }
        }

        /// The number stored beside the text (numeric value, 1/0 for a boolean); nil otherwise.
        package var number: Double? {
            switch self {
            case .number(let number): number
            case .boolean(let verdict): verdict ? 1 : 0
            default: nil
            }
        }
    }

    package struct ValueError: Error, Hashable, Sendable, CustomStringConvertible {
        package var description: String
        package init(_ description: String) { self.description = description }
    }

    package var name: String
    /// Bumped by the rubric's author when the meaning of a criterion changes; every label keeps the
    /// version (and the file's hash) it was made under.
    package var version: Int
    package var description: String?
    package var targets: [Target]
    package var criteria: [Criterion]

    package init(name: String, version: Int = 1, description: String? = nil, targets: [Target], criteria: [Criterion]) {
        self.name = name
        self.version = version
        self.description = description
        self.targets = targets
        self.criteria = criteria
    }

    package func criterion(_ name: String) -> Criterion? { criteria.first { $0.name == name } }

    /// The criterion and value a key stands for in the Review view.
    package func verdict(forKey key: String) -> (criterion: Criterion, value: Value)? {
        for criterion in criteria {
            switch criterion.kind {
            case .categorical(let options):
                if let option = options.first(where: { $0.key == key }) { return (criterion, .option(option.name)) }
            case .boolean(let trueKey, let falseKey):
                if key == trueKey { return (criterion, .boolean(true)) }
                if key == falseKey { return (criterion, .boolean(false)) }
            case .numeric:
                if criterion.takesDigit, key.count == 1, key.first!.isASCII, key.first!.isNumber,
                    case .success(let value) = criterion.value(key)
                {
                    return (criterion, value)
                }
            case .text:
                break
            }
        }
        return nil
    }

    /// The first criterion whose verdicts say pass or fail: what calibration compares a judge with
    /// when no criterion is named.
    package var passFailCriterion: Criterion? { criteria.first(where: \.passFails) }

    /// Keys the Review view keeps for itself; no option may take one.
    package static let reservedKeys: Set<String> = ["j", "k", "n", "s", "u", "d", "q", "e", "?", "/", ":", " "]
}
