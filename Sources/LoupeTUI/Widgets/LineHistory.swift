/// Command-line history with prefix search: ↑ recalls the previous entry that starts with what
/// was typed before browsing began, ↓ the next one, and past the newest the typed text returns.
package struct LineHistory: Hashable, Sendable {
    package private(set) var entries: [String]
    private var position: Int?
    private var prefix: String = ""
    private var draft: String = ""
    package let limit: Int

    package init(entries: [String] = [], limit: Int = 1000) {
        self.entries = Array(entries.suffix(limit))
        self.limit = limit
    }

    /// Adds a submitted line (skipping blanks and a repeat of the newest entry) and ends browsing.
    package mutating func record(_ line: String) {
        position = nil
        guard !line.allSatisfy(\.isWhitespace), entries.last != line else { return }
        entries.append(line)
        if entries.count > limit { entries.removeFirst(entries.count - limit) }
    }

    /// Ends browsing without recording anything.
    package mutating func reset() { position = nil }

    /// The older matching entry, or nil when there is none. `current` is the editor's text.
    package mutating func previous(current: String) -> String? {
        if position == nil {
            prefix = current
            draft = current
        }
        var index = (position ?? entries.count) - 1
        while index >= 0 {
            if entries[index].hasPrefix(prefix), entries[index] != current {
                position = index
                return entries[index]
            }
            index -= 1
        }
        return nil
    }

    /// The newer matching entry, or the typed draft once past the newest; nil when not browsing.
    package mutating func next() -> String? {
        guard let start = position else { return nil }
        var index = start + 1
        while index < entries.count {
            if entries[index].hasPrefix(prefix) {
                position = index
                return entries[index]
            }
            index += 1
        }
        position = nil
        return draft
    }
}
