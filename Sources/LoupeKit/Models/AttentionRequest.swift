/// What the Attention panel asks MiniLM to read: a sentence, or a pair.
package struct AttentionRequest: Hashable, Sendable {
    package var first: String
    package var second: String?

    package init(_ first: String, second: String? = nil) {
        self.first = first
        self.second = second
    }
}
