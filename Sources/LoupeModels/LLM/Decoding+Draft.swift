import LoupeTensor

extension Decoding {
    /// Chooses from a pass that read the next token and then `draft` (`logits`: `[1 + draft.count,
    /// vocabulary]`, row r the logits after the r-th token read): row by row while each choice is
    /// the draft's next token (read already, so the next row holds the logits after it), as plain
    /// decoding would choose one step at a time. Returns the first choice that is not the draft's
    /// (the token to read next; nil when generation has ended) and how many draft tokens were
    /// accepted: the caller's cache forgets the draft's rows past them.
    package mutating func choose(
        after draft: [Int32], from logits: Tensor, onText: (String, GeneratedToken?) -> Void
    ) throws(ModelError) -> (next: Int32?, accepted: Int) {
        precondition(logits.rows == draft.count + 1, "\(logits.rows) rows of logits for a draft of \(draft.count)")
        var accepted = 0
        for row in 0...draft.count where !isFinished {
            guard let token = try choose(logits, row: row, onText: onText) else { break }
            guard row < draft.count && token == draft[row] else { return (isFinished ? nil : token, accepted) }
            accepted += 1
        }
        return (nil, accepted)
    }
}
