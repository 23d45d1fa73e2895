import Foundation
import LoupeAgents
import LoupeBase
import LoupeKit
import LoupeTUI

extension TracesPanel {
    /// What a local model generated at one step, token by token (`T`): the text with every
    /// token shaded by how unsure the model was of it, low-confidence and near-tie tokens marked,
    /// and the token under the cursor's most likely alternatives with their probabilities. `[` and
    /// `]` walk the uncertain tokens, the places the step could have gone another way.
    ///
    /// The tokens are the span's ``GeneratedTokens`` record (`loupe.llm.tokens`), the same that
    /// `loupe trace tokens` prints; the marks use its thresholds (``GeneratedTokens/Token``).
    package struct TokenView: Sendable {
        /// The span whose tokens these are.
        package let ordinal: Int
        /// One sequence per choice the call returned; the first is shown.
        package let sequences: [GeneratedTokens]
        /// The token under the cursor, an index into ``tokens``.
        package private(set) var cursor = 0
        /// The fork line over the view while an alternative or a text is chosen (`F`).
        package private(set) var chooser: TokenForkChooser?

        /// The generated tokens in `detail`, or nil when the span has none (it is not a local
        /// model's step).
        ///
        /// - Throws: ``GeneratedTokensError`` naming the span and field when the record is malformed.
        init?(ordinal: Int, spanID: String, detail: SpanDetail) throws(GeneratedTokensError) {
            let sequences = try GeneratedTokens.decode(detail.payload.attributes, span: spanID)
            guard sequences.contains(where: { !$0.tokens.isEmpty }) else { return nil }
            self.ordinal = ordinal
            self.sequences = sequences.filter { !$0.tokens.isEmpty }
        }

        package var tokens: [GeneratedTokens.Token] { sequences[0].tokens }

        /// The positions marked low-confidence or near-tie, in order.
        package var uncertain: [Int] { tokens.indices.filter { tokens[$0].isUncertain } }

        // MARK: - Keys

        /// `h`/`l` (and `j`/`k`) the previous and next token, the page keys ten at a time, `g`/`G`
        /// the first and last.
        mutating func perform(_ action: PanelAction) {
            switch action {
            case .right, .down: move(to: cursor + 1)
            case .left, .up: move(to: cursor - 1)
            case .pageDown: move(to: cursor + 10)
            case .pageUp: move(to: cursor - 10)
            case .top: move(to: 0)
            case .bottom: move(to: tokens.count - 1)
            case .open, .specific: break
            }
        }

        /// `]` and `[`: the next (or previous) uncertain token, wrapping around; false when none is.
        mutating func moveToUncertain(forward: Bool) -> Bool {
            let tokens = self.tokens
            guard
                let index = nextIndex(
                    count: tokens.count, from: cursor, forward: forward, where: { tokens[$0].isUncertain })
            else { return false }
            cursor = index
            return true
        }

        /// Puts the cursor on token `index` (clamped to the tokens).
        mutating func select(_ index: Int) { move(to: index) }

        private mutating func move(to index: Int) {
            cursor = max(0, min(tokens.count - 1, index))
        }

        // MARK: - Fork

        /// `F`: the fork line on the cursor token, its second-best alternative highlighted.
        mutating func openChooser() {
            chooser = TokenForkChooser(token: tokens[cursor], index: cursor)
        }

        /// A key on the fork line; the line closes once it forks or is cancelled.
        mutating func handleChooser(_ key: Key) -> TokenForkChooser.Outcome {
            guard var open = chooser else { return .cancelled }
            let outcome = open.handle(key)
            switch outcome {
            case .choosing, .refused: chooser = open
            case .cancelled, .alternative, .text: chooser = nil
            }
            return outcome
        }

        // MARK: - Layout

        /// A run of one token's text on one display row.
        package struct Piece: Hashable, Sendable {
            package var token: Int
            /// The column in the row, from 0.
            package var column: Int
            package var text: String
        }

        /// The tokens' text wrapped to `width` columns, a row of pieces at a time: a token moves
        /// to the next row rather than break when it fits on one; a newline shows as `↵` and ends
        /// its row; control characters are made visible, and an empty token shows as `∅` so the
        /// cursor has somewhere to be.
        package static func layout(_ texts: [String], width: Int) -> [[Piece]] {
            let width = max(1, width)
            var rows: [[Piece]] = [[]]
            var column = 0
            func newRow() {
                rows.append([])
                column = 0
            }
            for (index, raw) in texts.enumerated() {
                let parts = raw.split(separator: "\n", omittingEmptySubsequences: false)
                for (number, part) in parts.enumerated() {
                    let last = number == parts.count - 1
                    var text = UntrustedText.sanitized(part) + (last ? "" : "↵")
                    if text.isEmpty {
                        guard parts.count == 1 else { continue }
                        text = "∅"
                    }
                    let textWidth = TextWidth.of(text)
                    if column > 0, column + textWidth > width, textWidth <= width { newRow() }
                    var chunk = ""
                    var start = column
                    for character in text {
                        let characterWidth = TextWidth.of(character)
                        if column > 0, column + characterWidth > width {
                            if !chunk.isEmpty {
                                rows[rows.count - 1].append(Piece(token: index, column: start, text: chunk))
                            }
                            chunk = ""
                            newRow()
                            start = 0
                        }
                        chunk.append(character)
                        column += characterWidth
                    }
                    if !chunk.isEmpty { rows[rows.count - 1].append(Piece(token: index, column: start, text: chunk)) }
                    if !last { newRow() }
                }
            }
            if rows.count > 1, rows[rows.count - 1].isEmpty { rows.removeLast() }
            return rows
        }

        // MARK: - Render

        /// How unsure the model was of a token, 0 (certain) to 1: what its shade shows.
        static func doubt(_ token: GeneratedTokens.Token) -> Double {
            let p = token.probability
            return p.isFinite ? 1 - min(1, max(0, p)) : 1
        }

        /// Shade glyphs for a monochrome terminal, from sure to unsure.
        static let shades = [" ", "░", "▒", "▓", "█"]

        static func shadeGlyph(_ doubt: Double) -> String {
            shades[min(shades.count - 1, Int(doubt * Double(shades.count - 1) + 0.5))]
        }

        /// A token's text style: on colour terminals its background on the theme's heat ramp by
        /// doubt, text black or white as the background needs; the cursor's is the selection.
        static func style(_ token: GeneratedTokens.Token, selected: Bool, theme: Theme) -> Style {
            // The cursor in reverse and bold: the selection's blue alone is close to the ramp's
            // own blue (p ≈ 0.75), and the cursor must not read as a probability.
            if selected {
                var style = theme.selection
                style.attributes.formUnion(theme.isMonochrome ? [.reverse] : [.reverse, .bold])
                return style
            }
            var attributes: TextAttributes = token.isLowConfidence ? [.underline] : []
            if token.isNearTie { attributes.insert(.bold) }
            if theme.isMonochrome { return Style(attributes: attributes) }
            let background = theme.heatColor(doubt(token))
            let light =
                0.299 * Double(background.red) + 0.587 * Double(background.green) + 0.114 * Double(background.blue)
            return Style(
                foreground: light > 140 ? RGB(0, 0, 0) : RGB(255, 255, 255), background: background,
                attributes: attributes)
        }

        /// The mark under a token's cells: `^` low-confidence, `~` near-tie; on a monochrome
        /// terminal the others carry their shade glyph, as colour carries it elsewhere.
        static func mark(_ token: GeneratedTokens.Token, theme: Theme) -> String {
            if token.isLowConfidence { return "^" }
            if token.isNearTie { return "~" }
            return theme.isMonochrome ? shadeGlyph(doubt(token)) : " "
        }

        /// The counts, the legend, the shaded text (scrolled to keep the cursor in view) and, at
        /// the bottom, the cursor token's alternatives.
        func render(into frame: inout Frame, area: Rect, theme: Theme) {
            guard area.width > 8, area.height > 3 else { return }
            let tokens = self.tokens
            let low = tokens.filter(\.isLowConfidence).count
            let ties = tokens.filter(\.isNearTie).count
            let summary =
                TracesPanel.plural(tokens.count, "token") + " · \(low) low · " + TracesPanel.plural(ties, "near-tie")
                + (sequences.count > 1 ? " · choice 1 of \(sequences.count)" : "")
            frame.draw(TextWidth.fit(summary, toColumns: area.width), at: Point(x: area.x, y: area.y), style: theme.dim)
            let legend = legendLines(theme: theme, width: area.width)
            for (row, line) in legend.enumerated() {
                frame.draw(line, at: Point(x: area.x, y: area.y + 1 + row), clip: area)
            }
            let top = area.y + 1 + legend.count
            let token = tokens[cursor]
            // The alternatives' box takes what the text leaves, at least half the room, up to
            // every alternative: on a small screen all the text and most alternatives show.
            let room = area.maxY - top
            let textLines = Self.displayLines(tokens, cursor: cursor, width: area.width - 1, theme: theme).lines.count
            let boxHeight = min(token.alternatives.count + 3, max(3, room - textLines, room / 2))
            let textArea = Rect(x: area.x, y: top, width: area.width, height: area.maxY - top - boxHeight)
            renderText(into: &frame, area: textArea, theme: theme)
            renderAlternatives(
                into: &frame, area: Rect(x: area.x, y: textArea.maxY, width: area.width, height: boxHeight),
                theme: theme)
            chooser?.render(into: &frame, area: area, theme: theme)
        }

        /// `p 1 .75 .5 .25 0` on the ramp (or with shade glyphs), then what the marks mean; on two
        /// lines when one is too narrow.
        func legendLines(theme: Theme, width: Int) -> [[Span]] {
            var scale: [Span] = [Span("p ", theme.dim)]
            for (label, p) in [(" 1  ", 1.0), (" .75", 0.75), (" .5 ", 0.5), (" .25", 0.25), (" 0  ", 0.0)] {
                let sample = GeneratedTokens.Token(id: nil, text: "", logprob: log(p), entropy: nil, alternatives: [])
                if theme.isMonochrome {
                    scale += [
                        Span(label.trimmingCharacters(in: .whitespaces), theme.text),
                        Span(Self.shadeGlyph(1 - p) + " ", theme.text),
                    ]
                } else {
                    var style = Self.style(sample, selected: false, theme: theme)
                    style.attributes = []
                    scale.append(Span(label, style))
                }
            }
            let marks = [
                Span("  ^", theme.key), Span(" p<\(Calculator.format(GeneratedTokens.Token.lowConfidence))", theme.dim),
                Span("  ~", theme.key), Span(" tie<\(Calculator.format(GeneratedTokens.Token.nearTie))", theme.dim),
            ]
            let scaleWidth = scale.reduce(0) { $0 + TextWidth.of($1.text) }
            let marksWidth = marks.reduce(0) { $0 + TextWidth.of($1.text) }
            if scaleWidth + marksWidth <= width { return [scale + marks] }
            var second = marks
            second[0] = Span("^", theme.key)
            return [scale, second]
        }

        /// The shaded text with a row of marks under each row that has any (always, on a
        /// monochrome terminal, where the marks carry the shading).
        /// The text's display lines at `width`: each row of pieces, and under it its marks when
        /// it has any (always, on a monochrome terminal); and the line the cursor is on.
        static func displayLines(_ tokens: [GeneratedTokens.Token], cursor: Int, width: Int, theme: Theme) -> (
            rows: [[Piece]], lines: [(row: Int, marks: Bool)], cursorLine: Int
        ) {
            let rows = layout(tokens.map(\.text), width: width)
            var lines: [(row: Int, marks: Bool)] = []
            var cursorLine = 0
            for (index, row) in rows.enumerated() {
                if row.contains(where: { $0.token == cursor }) { cursorLine = lines.count }
                lines.append((index, false))
                if theme.isMonochrome || row.contains(where: { tokens[$0.token].isUncertain }) {
                    lines.append((index, true))
                }
            }
            return (rows, lines, cursorLine)
        }

        private func renderText(into frame: inout Frame, area: Rect, theme: Theme) {
            guard area.height > 0 else { return }
            let tokens = self.tokens
            let (rows, lines, cursorLine) = Self.displayLines(
                tokens, cursor: cursor, width: area.width - 1, theme: theme)
            // Keep the cursor's row in view, a third of the way down when the text scrolls.
            let first = max(0, min(cursorLine - area.height / 3, lines.count - area.height))
            for (offset, line) in lines.dropFirst(first).prefix(area.height).enumerated() {
                let y = area.y + offset
                for piece in rows[line.row] {
                    let token = tokens[piece.token]
                    let point = Point(x: area.x + piece.column, y: y)
                    if line.marks {
                        let glyph = Self.mark(token, theme: theme)
                        frame.draw(
                            String(repeating: glyph, count: TextWidth.of(piece.text)), at: point,
                            style: glyph == "^" || glyph == "~" ? theme.key : theme.dim, clip: area)
                    } else {
                        frame.draw(
                            piece.text, at: point,
                            style: Self.style(token, selected: piece.token == cursor, theme: theme),
                            clip: area)
                    }
                }
            }
            if lines.count > area.height {
                Scrollbar.render(
                    into: &frame, x: area.maxX - 1, rows: area, offset: first, count: lines.count, theme: theme)
            }
        }

        /// The cursor token: its probability, entropy and marks, then each alternative with its
        /// probability as a number and a bar, the chosen one marked.
        private func renderAlternatives(into frame: inout Frame, area: Rect, theme: Theme) {
            let token = tokens[cursor]
            let title = "token #\(cursor) · \(cursor + 1) of \(tokens.count)"
            // The long hint only where both titles fit whole (borders and gaps take about 8 cells);
            // the footer names the keys either way.
            let hint = "f: fork with 2nd · F: choose"
            let trailing =
                chooser != nil
                ? "1–\(token.alternatives.count): fork"
                : title.count + hint.count + 8 <= area.width ? hint : "f/F: fork"
            let inner = Block(
                title: title, trailingTitle: trailing,
                focused: chooser != nil
            ).render(into: &frame, area: area, theme: theme)
            guard inner.width > 4, inner.height > 0 else { return }
            // The marks before the entropy, and its unit dropped where the line is narrow, so
            // what the `]` walk stopped on stays in view.
            var facts = [String(format: "p %.3f", token.probability)]
            if token.isLowConfidence { facts.append("low") }
            if token.isNearTie { facts.append("near-tie") }
            let quoted = TracesPanel.quoted(token.text)
            if let entropy = token.entropy {
                let long = String(format: "entropy %.2f nats", entropy)
                let fits =
                    TextWidth.of(quoted) + 2 + TextWidth.of((facts + [long]).joined(separator: " · ")) <= inner.width
                facts.append(fits ? long : String(format: "H %.2f", entropy))
            }
            frame.draw(
                [
                    Span(quoted, theme.accent),
                    Span("  " + facts.joined(separator: " · "), token.isUncertain ? theme.status(.warn) : theme.dim),
                ], at: Point(x: inner.x, y: inner.y), clip: inner)
            let textWidth = min(18, max(6, inner.width / 3))
            let barWidth = max(0, inner.width - textWidth - 11)
            for (row, alternative) in token.alternatives.prefix(inner.height - 1).enumerated() {
                let chosen = alternative.id.map { $0 == token.id } ?? (alternative.text == token.text)
                let cells = Int((alternative.probability * Double(barWidth)).rounded())
                // Numbered as `trace fork --choose` and the fork line take them.
                let highlighted = chooser?.selected == row
                frame.draw(
                    [
                        Span("\(row + 1)", highlighted ? theme.selection : theme.dim),
                        Span(chosen ? "● " : "  ", theme.key),
                        Span(
                            TextWidth.fit(TracesPanel.quoted(alternative.text), toColumns: textWidth),
                            chosen ? theme.text : theme.dim),
                        Span(String(format: " %.3f ", alternative.probability), theme.text),
                        Span(String(repeating: "█", count: max(0, min(barWidth, cells))), theme.accent),
                    ], at: Point(x: inner.x, y: inner.y + 1 + row), clip: inner)
            }
        }
    }

    /// A token's text as one quoted display cell, control characters made visible.
    static func quoted(_ text: String) -> String { "\"" + UntrustedText.sanitized(text) + "\"" }
}
