extension GeneratedTokens.Token {
    /// Below this probability a chosen token counts as low-confidence.
    package static let lowConfidence = 0.3
    /// Below this gap between the two most likely alternatives' probabilities a position is a near-tie.
    package static let nearTie = 0.1

    /// Whether the chosen token's probability is below ``lowConfidence``.
    package var isLowConfidence: Bool { probability < Self.lowConfidence }

    /// Whether the position's two most likely alternatives are within ``nearTie`` of each other:
    /// the model could as easily have gone the other way.
    package var isNearTie: Bool {
        guard alternatives.count >= 2 else { return false }
        let sorted = alternatives.map(\.probability).sorted(by: >)
        return sorted[0] - sorted[1] < Self.nearTie
    }

    /// Low-confidence or a near-tie: the places `[` and `]` walk and `loupe trace tokens` marks.
    package var isUncertain: Bool { isLowConfidence || isNearTie }
}
