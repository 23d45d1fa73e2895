import Foundation
import Yams

/// Reads a rubric's YAML. As with suites, every mistake is reported at the file, line and column of
/// the node that holds it, and unknown keys are mistakes.
///
/// ```yaml
/// name: answer-quality
/// version: 1
/// targets: [answer]
/// criteria:
///   - name: correct
///     kind: categorical
///     options:
///       - {name: right, key: r, pass: true}
///       - {name: partly, key: p}
///       - {name: wrong, key: w}
///   - name: grounded
///     kind: boolean          # keys t and f unless true_key/false_key say otherwise
///   - name: clarity
///     kind: numeric
///     range: [1, 5]
///     step: 1                # typed with one digit
///     pass_at: 4
///   - name: note
///     kind: text
/// ```
package enum RubricParser {
    package static func parse(_ text: String, file: String) throws(SuiteError) -> Rubric {
        do { return try rubric(text, reader: YAMLReader(file: file)) } catch let error as SuiteError {
            throw error
        } catch {
            throw SuiteError(file: file, "\(error)")
        }
    }

    static let topKeys: Set = ["name", "version", "description", "targets", "criteria"]
    static let criterionKeys: Set = [
        "name", "description", "kind", "options", "range", "step", "pass_at", "true_key", "false_key",
    ]

    private static func rubric(_ text: String, reader: YAMLReader) throws -> Rubric {
        let root = try reader.root(text, "the rubric")
        let top = try reader.mapping(root, "the rubric", allowed: topKeys)
        guard let nameNode = top["name"] else { throw reader.error(root, "the rubric needs a name: (name: my-rubric)") }
        let name = try reader.string(nameNode, "name")
        guard !name.isEmpty else { throw reader.error(nameNode, "the rubric's name is empty") }
        var targets = [Rubric.Target.answer]
        if let node = top["targets"] {
            targets = try reader.list(node, "targets").map { node in
                let word = try reader.string(node, "a target")
                guard let target = Rubric.Target(rawValue: word) else {
                    throw reader.error(
                        node,
                        "target '\(word)': use \(Rubric.Target.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                return target
            }
            guard !targets.isEmpty else { throw reader.error(node, "targets is empty") }
        }
        guard let criteriaNode = top["criteria"] else { throw reader.error(root, "the rubric needs criteria: a list") }
        let nodes = try reader.list(criteriaNode, "criteria")
        guard !nodes.isEmpty else { throw reader.error(criteriaNode, "criteria is empty") }
        var keys: [String: String] = [:]
        var criteria: [Rubric.Criterion] = []
        var digitCriterion: String?
        for node in nodes {
            let criterion = try self.criterion(node, reader: reader, keys: &keys)
            guard !criteria.contains(where: { $0.name == criterion.name }) else {
                throw reader.error(node, "criterion '\(criterion.name)' is given twice")
            }
            if criterion.takesDigit {
                if let digitCriterion {
                    throw reader.error(
                        node,
                        "'\(criterion.name)' and '\(digitCriterion)' both take digit keys: give one a range beyond 0–9 "
                            + "or a step other than 1, or split the rubric")
                }
                digitCriterion = criterion.name
            }
            criteria.append(criterion)
        }
        var rubric = Rubric(name: name, targets: targets, criteria: criteria)
        if let node = top["version"] { rubric.version = try reader.int(node, "version", atLeast: 1) }
        if let node = top["description"] { rubric.description = try reader.string(node, "description") }
        return rubric
    }

    private static func criterion(_ node: Node, reader: YAMLReader, keys: inout [String: String]) throws
        -> Rubric.Criterion
    {
        let fields = try reader.mapping(node, "a criterion", allowed: criterionKeys)
        guard let nameNode = fields["name"] else { throw reader.error(node, "a criterion needs a name") }
        let name = try reader.string(nameNode, "the criterion's name")
        guard !name.isEmpty, !name.contains("="), !name.contains(where: \.isWhitespace) else {
            throw reader.error(nameNode, "a criterion's name is one word without '=' (it is written name=value)")
        }
        guard let kindNode = fields["kind"] else {
            throw reader.error(node, "criterion '\(name)' needs a kind: categorical, numeric, boolean or text")
        }
        let kindWord = try reader.string(kindNode, "kind")
        let allowed: Set<String>
        let kind: Rubric.Kind
        func key(_ node: Node, _ what: String) throws -> String {
            let key = try reader.string(node, what)
            guard key.count == 1, let character = key.first, !character.isNewline else {
                throw reader.error(node, "\(what) '\(key)' must be one character")
            }
            guard !Rubric.reservedKeys.contains(key), !character.isNumber else {
                throw reader.error(
                    node,
                    "\(what) '\(key)' is taken by the Review view (digits and "
                        + Rubric.reservedKeys.sorted().filter { $0 != " " }.joined(separator: " ") + ", space)")
            }
            if let holder = keys[key] { throw reader.error(node, "key '\(key)' is already \(holder)'s") }
            keys[key] = what
            return key
        }
        switch kindWord {
        case "categorical":
            allowed = ["name", "description", "kind", "options"]
            guard let optionsNode = fields["options"] else {
                throw reader.error(node, "categorical criterion '\(name)' needs options: a list")
            }
            let list = try reader.list(optionsNode, "options")
            var options: [Rubric.Option] = []
            for optionNode in list {
                let option = try reader.mapping(optionNode, "an option", allowed: ["name", "key", "pass"])
                guard let optionName = option["name"] else { throw reader.error(optionNode, "an option needs a name") }
                let word = try reader.string(optionName, "the option's name")
                guard !word.isEmpty else { throw reader.error(optionName, "an option's name is empty") }
                guard !options.contains(where: { $0.name == word }) else {
                    throw reader.error(optionName, "option '\(word)' is given twice")
                }
                guard let keyNode = option["key"] else {
                    throw reader.error(optionNode, "option '\(word)' needs a key (one character)")
                }
                let chosen = try key(keyNode, "\(name)=\(word)")
                let passes = try option["pass"].map { try reader.bool($0, "pass") } ?? false
                options.append(Rubric.Option(name: word, key: chosen, passes: passes))
            }
            guard options.count >= 2 else { throw reader.error(optionsNode, "'\(name)' needs at least two options") }
            kind = .categorical(options)
        case "numeric":
            allowed = ["name", "description", "kind", "range", "step", "pass_at"]
            guard let rangeNode = fields["range"] else {
                throw reader.error(node, "numeric criterion '\(name)' needs a range: [low, high]")
            }
            let bounds = try reader.list(rangeNode, "range").map { try reader.double($0, "a bound of the range") }
            guard bounds.count == 2, bounds[0] < bounds[1] else {
                throw reader.error(rangeNode, "range is [low, high] with low below high")
            }
            let step = try fields["step"].map { try reader.double($0, "step") } ?? 1
            guard step > 0, step <= bounds[1] - bounds[0] else {
                throw reader.error(fields["step"] ?? node, "step must be above 0 and within the range")
            }
            var passAt: Double?
            if let passNode = fields["pass_at"] {
                let value = try reader.double(passNode, "pass_at")
                guard value >= bounds[0], value <= bounds[1] else {
                    throw reader.error(passNode, "pass_at must lie in the range")
                }
                passAt = value
            }
            kind = .numeric(lower: bounds[0], upper: bounds[1], step: step, passAt: passAt)
        case "boolean":
            allowed = ["name", "description", "kind", "true_key", "false_key"]
            let trueKey = try fields["true_key"].map { try key($0, "\(name)=true") } ?? "t"
            let falseKey = try fields["false_key"].map { try key($0, "\(name)=false") } ?? "f"
            if fields["true_key"] == nil {
                guard keys["t"] == nil else {
                    throw reader.error(node, "key 't' is already \(keys["t"]!)'s: give '\(name)' a true_key")
                }
                keys["t"] = "\(name)=true"
            }
            if fields["false_key"] == nil {
                guard keys["f"] == nil else {
                    throw reader.error(node, "key 'f' is already \(keys["f"]!)'s: give '\(name)' a false_key")
                }
                keys["f"] = "\(name)=false"
            }
            kind = .boolean(trueKey: trueKey, falseKey: falseKey)
        case "text":
            allowed = ["name", "description", "kind"]
            kind = .text
        default:
            throw reader.error(kindNode, "kind '\(kindWord)': use categorical, numeric, boolean or text")
        }
        if let extra = fields.keys.sorted().first(where: { !allowed.contains($0) }), let extraNode = fields[extra] {
            throw reader.error(extraNode, "'\(extra)' does not apply to a \(kindWord) criterion")
        }
        return Rubric.Criterion(
            name: name, description: try fields["description"].map { try reader.string($0, "description") }, kind: kind)
    }
}
