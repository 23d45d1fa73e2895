/// Every command of the language with what completion and the palette need to know.
package struct CommandCatalog: Hashable, Sendable {
    /// One command (or command group).
    package struct Entry: Hashable, Sendable {
        /// Words that invoke it: `["workspace", "info"]`.
        package var path: [String]
        package var abstract: String
        /// Option and flag spellings: `--json`, `-k`.
        package var options: [String]
        /// True when it cannot run without arguments (the palette then opens the `:` line).
        package var needsArguments: Bool
        /// True for a group whose subcommands do the work.
        package var isGroup: Bool

        package init(path: [String], abstract: String, options: [String], needsArguments: Bool, isGroup: Bool) {
            self.path = path
            self.abstract = abstract
            self.options = options
            self.needsArguments = needsArguments
            self.isGroup = isGroup
        }

        package var name: String { path.joined(separator: " ") }
    }

    package var entries: [Entry]

    package init(entries: [Entry]) { self.entries = entries }

    /// The entry whose path is the longest prefix of `words`.
    package func entry(matching words: [String]) -> Entry? {
        var best: Entry?
        for entry in entries
        where entry.path.count <= words.count && Array(words.prefix(entry.path.count)) == entry.path {
            if entry.path.count > (best?.path.count ?? 0) { best = entry }
        }
        return best
    }

    /// Names that may follow `path` as the next word.
    package func subcommands(of path: [String]) -> [String] {
        let names = entries.filter { $0.path.count == path.count + 1 && Array($0.path.prefix(path.count)) == path }
            .map { $0.path[path.count] }
        return Array(Set(names)).sorted()
    }

    /// Completions for the last word of `line`: the candidates and the partial word they replace.
    package func completions(for line: String) -> (partial: String, candidates: [String]) {
        var words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let partial = line.hasSuffix(" ") || line.isEmpty ? "" : (words.popLast() ?? "")
        var path: [String] = []
        for word in words {
            if subcommands(of: path).contains(word) { path.append(word) } else { break }
        }
        let pool: [String]
        if partial.hasPrefix("-") {
            pool = (entry(matching: path)?.options ?? []) + ["--help"]
        } else if words.count == path.count {
            pool = subcommands(of: path)
        } else {
            pool = []
        }
        let candidates = Array(Set(pool.filter { $0.hasPrefix(partial) })).sorted()
        return (partial, candidates)
    }

    /// The longest common prefix of `candidates`.
    package static func commonPrefix(_ candidates: [String]) -> String {
        guard var prefix = candidates.first else { return "" }
        for candidate in candidates.dropFirst() {
            while !candidate.hasPrefix(prefix) { prefix.removeLast() }
        }
        return prefix
    }

    /// The known command closest to a mistyped one, when it is close enough to be a typo.
    package func suggestion(for word: String, under path: [String] = []) -> String? {
        let names = subcommands(of: path)
        guard let best = names.min(by: { editDistance($0, word) < editDistance($1, word) }) else { return nil }
        return editDistance(best, word) <= max(2, word.count / 3) ? best : nil
    }
}
