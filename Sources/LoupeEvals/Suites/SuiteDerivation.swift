import Foundation
import Yams

extension SuiteParser {
    /// A new suite's YAML made from `text` (the suite `file`): the same target and scorers, named
    /// after `newFile`, reading `dataset`. Paths are rewritten relative to the new file's directory
    /// (the dataset, a retrieval target's judgments). The base is checked first: a mistake in it
    /// is reported at its file:line:col.
    package static func derived(
        from text: String, file: String, as newFile: String, dataset: String, description: String
    ) throws(SuiteError) -> String {
        let base = try parse(text, file: file)
        let top: Node.Mapping
        do {
            guard case .mapping(let mapping)? = try Yams.compose(yaml: text) else {
                throw SuiteError(file: file, "a suite is a mapping")
            }
            top = mapping
        } catch let error as SuiteError { throw error } catch { throw SuiteError(file: file, "\(error)") }
        let directory = URL(fileURLWithPath: newFile).standardizedFileURL.deletingLastPathComponent().path
        var out = Node.Mapping([])
        out["name"] = Node(URL(fileURLWithPath: newFile).deletingPathExtension().lastPathComponent)
        out["description"] = Node(description)
        out["dataset"] = Node(relative(URL(fileURLWithPath: dataset).standardizedFileURL.path, from: directory))
        for (key, value) in top {
            guard let name = key.string, !["name", "description", "dataset"].contains(name) else { continue }
            out[name] = value
        }
        // A retrieval target's judgments are a path relative to the suite: keep pointing at them.
        if case .retrieval(let retrieval) = base.target, case .mapping(var target)? = out["target"],
            case .mapping(var fields)? = target["retrieval"]
        {
            fields["qrels"] = Node(relative(retrieval.qrelsPath, from: directory))
            target["retrieval"] = .mapping(fields)
            out["target"] = .mapping(target)
        }
        do { return try Yams.serialize(node: .mapping(out)) } catch { throw SuiteError(file: newFile, "\(error)") }
    }

    /// `path` relative to `directory` (both absolute and standardized).
    package static func relative(_ path: String, from directory: String) -> String {
        let target = path.split(separator: "/").map(String.init)
        let base = directory.split(separator: "/").map(String.init)
        var common = 0
        while common < min(target.count, base.count), target[common] == base[common] { common += 1 }
        let ups = Array(repeating: "..", count: base.count - common)
        return (ups + target[common...]).joined(separator: "/")
    }
}
