import Foundation
import Yams

/// Typed reads of YAML nodes that fail with the node's place (file:line:col): suites, rubrics and
/// anything else Loupe reads from YAML share one way of saying what is wrong and where.
struct YAMLReader {
    var file: String

    init(file: String) { self.file = file }
    var directory: String { (file as NSString).deletingLastPathComponent }

    func error(_ node: Node, _ message: String) -> SuiteError {
        SuiteError(file: file, line: node.mark?.line, column: node.mark?.column, message)
    }

    func syntax(_ error: YamlError) -> SuiteError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let said = [context.map { "\($0.text)" }, problem].compactMap { $0 }.joined(separator: ": ")
            return SuiteError(file: file, line: mark.line, column: mark.column, "not valid YAML: \(said)")
        default:
            return SuiteError(file: file, "not valid YAML: \(error)")
        }
    }

    func mapping(_ node: Node, _ what: String, allowed: Set<String>) throws -> [String: Node] {
        guard case .mapping(let mapping) = node else { throw error(node, "\(what) must be a mapping (key: value)") }
        var out: [String: Node] = [:]
        for (key, value) in mapping {
            guard let name = key.string else { throw error(key, "keys of \(what) must be text") }
            guard allowed.contains(name) else {
                throw error(
                    key, "unknown key '\(name)' in \(what) (known: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard out[name] == nil else { throw error(key, "'\(name)' is given twice in \(what)") }
            out[name] = value
        }
        return out
    }

    func string(_ node: Node, _ what: String) throws -> String {
        guard case .scalar(let scalar) = node else { throw error(node, "\(what) must be text") }
        return scalar.string
    }

    /// A whole number in `least...most`: the default ceiling keeps counts multiplied later
    /// (items × epochs) far from overflowing `Int`.
    func int(_ node: Node, _ what: String, atLeast least: Int = 0, atMost most: Int = 1_000_000) throws -> Int {
        guard let value = node.int else { throw error(node, "\(what) must be a whole number") }
        guard value >= least else { throw error(node, "\(what) must be at least \(least)") }
        guard value <= most else { throw error(node, "\(what) must be at most \(most)") }
        return value
    }

    /// A finite number: `.inf` and `.nan` are YAML numbers, but no threshold, timeout or
    /// parameter here means anything with them (a timeout of `.inf` would trap in `Duration`).
    func double(_ node: Node, _ what: String) throws -> Double {
        guard let value = node.float ?? node.int.map(Double.init) else {
            throw error(node, "\(what) must be a number")
        }
        guard value.isFinite else { throw error(node, "\(what) must be a finite number") }
        return value
    }

    func bool(_ node: Node, _ what: String) throws -> Bool {
        guard let value = node.bool else { throw error(node, "\(what) must be true or false") }
        return value
    }

    func path(_ node: Node, _ what: String) throws -> String {
        let given = try string(node, what)
        guard !given.isEmpty else { throw error(node, "\(what) is empty") }
        let full = given.hasPrefix("/") ? given : (directory.isEmpty ? given : directory + "/" + given)
        return URL(fileURLWithPath: full).standardizedFileURL.path
    }

    /// The document's root node; an empty file and a syntax error are mistakes at their place.
    func root(_ text: String, _ what: String) throws -> Node {
        do {
            guard let node = try Yams.compose(yaml: text) else { throw SuiteError(file: file, "the file is empty") }
            return node
        } catch let error as SuiteError {
            throw error
        } catch let error as YamlError {
            throw syntax(error)
        } catch {
            throw SuiteError(file: file, "\(error)")
        }
    }

    func list(_ node: Node, _ what: String) throws -> [Node] {
        guard case .sequence(let sequence) = node else { throw error(node, "\(what) must be a list") }
        return Array(sequence)
    }
}
