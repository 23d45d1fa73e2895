import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeTUI

extension TracesPanel {
    /// Fork at a token (`F` in the token view): pick one of the cursor token's alternatives (its
    /// number, or ↑↓ and enter) or type the text to put there instead, on a line over the view.
    /// Whichever is chosen, `trace fork --at-token` runs with it.
    package struct TokenForkChooser: Sendable {
        /// The token's index in the step's generated tokens.
        package let token: Int
        /// The alternatives as the box lists them, most likely first, and which one the model chose.
        package let alternatives: [GeneratedTokens.Alternative]
        package let chosen: Int?
        /// The highlighted alternative (from 0); enter on an empty line forks with it.
        package private(set) var selected: Int
        package private(set) var input = LineEditor()

        /// The chooser on `token` (index `index`), highlighting the second-best alternative.
        init(token: GeneratedTokens.Token, index: Int) {
            self.token = index
            alternatives = token.alternatives
            chosen = token.alternatives.firstIndex { $0.id.map { $0 == token.id } ?? ($0.text == token.text) }
            selected = Self.secondBest(token) ?? 0
        }

        /// The most likely alternative (its index, from 0) that is not the token the model chose:
        /// the second-best when the model took the best, as a greedy step does. Nil when the
        /// token has no other alternative.
        package static func secondBest(_ token: GeneratedTokens.Token) -> Int? {
            token.alternatives.firstIndex { alternative in
                alternative.id.map { $0 != token.id } ?? (alternative.text != token.text)
            }
        }

        /// What a key did.
        enum Outcome: Equatable {
            case choosing
            case cancelled
            /// Fork with the alternative numbered `k` (from 1).
            case alternative(Int)
            /// Fork with typed text from the token on.
            case text(String)
            /// The key asked for something that cannot be forked (the chosen token itself).
            case refused(String)
        }

        /// A digit on an empty line picks that alternative; ↑↓ move the highlight; enter forks
        /// with the typed text, or the highlighted alternative when nothing is typed; esc closes.
        mutating func handle(_ key: Key) -> Outcome {
            switch key {
            case .escape: return .cancelled
            case .up:
                selected = max(0, selected - 1)
                return .choosing
            case .down:
                selected = min(max(0, alternatives.count - 1), selected + 1)
                return .choosing
            case .enter:
                let text = input.text
                if !text.isEmpty { return .text(text) }
                return pick(selected)
            case .character(let character) where input.text.isEmpty:
                if let digit = character.wholeNumberValue, (1...9).contains(digit) {
                    guard digit <= alternatives.count else {
                        return .refused(
                            "token \(token) has \(alternatives.count) alternatives: choose 1…\(alternatives.count)")
                    }
                    return pick(digit - 1)
                }
                input.handle(key)
                return .choosing
            default:
                input.handle(key)
                return .choosing
            }
        }

        private func pick(_ index: Int) -> Outcome {
            guard alternatives.indices.contains(index) else { return .refused("token \(token) has no alternatives") }
            guard index != chosen else {
                return .refused(
                    "alternative \(index + 1) (\(TracesPanel.quoted(alternatives[index].text))) is the token the "
                        + "model chose: choose another, or type text")
            }
            return .alternative(index + 1)
        }

        /// The line at the bottom of `area`: what the keys do, then what is typed.
        func render(into frame: inout Frame, area: Rect, theme: Theme) {
            let line = Rect(x: area.x, y: area.y + area.height - 1, width: area.width, height: 1)
            frame.fill(line, style: theme.text)
            input.render(
                into: &frame, area: line,
                prompt: [
                    Span(" fork at token #\(token)", theme.accent),
                    Span(
                        area.width < 100
                            ? " · 1–\(alternatives.count) ↑↓ enter · or type"
                            : " · 1–\(alternatives.count) or ↑↓ enter: an alternative · or type text", theme.dim),
                    Span(" › ", theme.accent),
                ],
                style: theme.text)
        }
    }
}
