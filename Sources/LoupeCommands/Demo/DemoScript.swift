import LoupeKit

/// The command lines of a demo script, and how a stopped one continues.
package enum DemoScript {
    /// The script's commands with their 1-based line numbers; blank lines and `#` comments are
    /// skipped.
    static func commands(in text: String) -> [(number: Int, line: String)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, raw in
            let line = raw.trimmingWhitespace()
            return line.isEmpty || line.hasPrefix("#") ? nil : (index + 1, line)
        }
    }

    /// `line` as it should run again after it was stopped part way: a `sae train` continues the
    /// newest unfinished SAE from its checkpoint (started over, it would make a second SAE and
    /// every later command naming the first would name the wrong one); any other command runs as
    /// it is (`eval run` resumes its unfinished run by itself, `ingest` skips what it stored).
    static func continuation(of line: String, saes: SAEBrowser) throws -> String {
        guard line.hasPrefix("sae train "), !line.contains("--resume") else { return line }
        guard let unfinished = try saes.listings().last(where: { !$0.finished }) else { return line }
        return line + " --resume \(unfinished.id)"
    }

    /// The models a line may require, each with whether a library has it and how to fetch it.
    static let requirements: [String: (present: @Sendable (ModelLibrary) -> Bool, fetch: String)] = [
        "smollm2": ({ $0.hasSmolLM2 }, "scripts/fetch-smollm2"), "minilm": ({ $0.hasMiniLM }, "scripts/fetch-minilm"),
    ]

    /// A line that runs only where a model is present, `if MODEL: COMMAND` (`if smollm2: agent
    /// run --provider local …`): the model's name and the command; nil for any other line. A clone
    /// that has not fetched the model still builds the rest of the demo.
    package static func condition(of line: String) -> (model: String, command: String)? {
        guard line.hasPrefix("if "), let colon = line.firstIndex(of: ":") else { return nil }
        let model = line[line.index(line.startIndex, offsetBy: 3)..<colon].trimmingWhitespace()
        let command = line[line.index(after: colon)...].trimmingWhitespace()
        guard !model.isEmpty, !model.contains(" "), !command.isEmpty else { return nil }
        return (model, command)
    }
}
