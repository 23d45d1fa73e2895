import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI

/// A pairwise item as an arena shows it: the question and what was expected across the top, the
/// two answers side by side below (A left, B right, scrolled together), each one's scores pinned
/// under it, and the verdict's keys in a strip at the bottom. Which run wrote which answer stays
/// hidden until the annotator has given their verdict.
extension ReviewPanel.ItemView {
    func renderPair(
        _ pair: ReviewService.Pair, item: ReviewService.Item, opened: ReviewBrowser.Opened, into frame: inout Frame,
        area: Rect, theme: Theme
    ) {
        let width = area.width - 2
        guard width > 20, area.height > 8 else { return }
        let verdict = opened.queue.rubric.criteria.first { $0.kind.isCategorical }
        let judged = verdict.map { criterion in
            item.labels.contains { $0.annotator == opened.annotator && $0.criterion == criterion.name }
        }
        let strip = verdictLines(item: item, opened: opened, theme: theme).map { $0.truncated(toColumns: width) }

        // The question and the targets take at most a third of what the strip leaves.
        let cap = max(2, (area.height - strip.count - 4) / 3)
        var top = promptRows(pair.left, width: width, theme: theme)
        if top.count > cap {
            let last = top[cap - 1]
            let cut = last.truncated(toColumns: width - 1)
            top = Array(top.prefix(cap - 1)) + [cut.width < last.width ? cut : cut + [Span("…", theme.dim)]]
        }
        for (row, spans) in top.enumerated() {
            frame.draw(spans, at: Point(x: area.x + 1, y: area.y + row), clip: area)
        }

        // Two equal columns between two rules; the right edge is the scrollbar's.
        let columnWidth = (area.width - 5) / 2
        let leftX = area.x + 1
        let ruleX = leftX + columnWidth + 1
        let rightX = ruleX + 2
        let rightWidth = area.maxX - 1 - rightX
        let headY = area.y + top.count
        let footY = area.maxY - strip.count - 1
        guard footY - headY > 2 else { return }
        let rule = theme.border(focused: false)
        for (y, junction) in [(headY, "┬"), (footY, "┴")] {
            frame.draw(String(repeating: "─", count: area.width), at: Point(x: area.x, y: y), style: rule, clip: area)
            frame.draw(junction, at: Point(x: ruleX, y: y), style: rule, clip: area)
        }
        for y in headY + 1..<footY { frame.draw("│", at: Point(x: ruleX, y: y), style: rule, clip: area) }
        for (side, run, x, room) in [("A", pair.leftRun, leftX, columnWidth), ("B", pair.rightRun, rightX, rightWidth)]
        {
            var heading = [Span(" " + side + " ", theme.title)]
            if judged == true {
                heading.append(
                    Span("= " + UntrustedText.sanitized(opened.runNames[run] ?? "run \(run)") + " ", theme.dim))
            }
            frame.draw(heading.truncated(toColumns: room - 1), at: Point(x: x, y: headY), clip: area)
        }

        let columns = Rect(x: area.x, y: headY + 1, width: area.width, height: footY - headY - 1)
        let widths = [columnWidth, rightWidth]
        let scoreRows = zip([pair.left, pair.right], widths).map { scoreLines($0, width: $1, theme: theme) }
        let answerRows = zip([pair.left, pair.right], widths).map {
            TextView(lines: answerLines($0, theme: theme)).displayRows(width: $1)
        }
        let count = answerRows.map(\.count).max() ?? 0
        // The scores follow the longer answer, level across the columns; when the answers scroll
        // the scores stay in sight at the foot, kept to a third of the room.
        let fitting = scoreRows.map(\.count).max() ?? 0
        let fits = count + 1 + fitting <= columns.height
        let scoreHeight = fits ? fitting : min(fitting, max(0, (columns.height - 2) / 3))
        let answerHeight = fits ? count : columns.height - (scoreHeight > 0 ? scoreHeight + 1 : 0)
        let offset = max(0, min(contextOffset, count - answerHeight))
        for (index, x) in [leftX, rightX].enumerated() {
            let clip = Rect(x: x, y: columns.y, width: widths[index], height: columns.height)
            for row in 0..<answerHeight where offset + row < answerRows[index].count {
                frame.draw(answerRows[index][offset + row], at: Point(x: x, y: columns.y + row), clip: clip)
            }
            guard scoreHeight > 0 else { continue }
            frame.draw(
                String(repeating: "╌", count: widths[index]), at: Point(x: x, y: columns.y + answerHeight),
                style: theme.dim, clip: clip)
            for (row, spans) in scoreRows[index].prefix(scoreHeight).enumerated() {
                frame.draw(spans, at: Point(x: x, y: columns.y + answerHeight + 1 + row), clip: clip)
            }
        }
        Scrollbar.render(
            into: &frame, x: area.maxX - 1,
            rows: Rect(x: area.maxX - 1, y: columns.y, width: 1, height: answerHeight), offset: offset, count: count,
            theme: theme)

        for (row, spans) in strip.enumerated() {
            frame.draw(spans, at: Point(x: area.x + 1, y: footY + 1 + row), clip: area)
        }
    }

    /// `Question  what …` and `Expected  …` wrapped under their text, the labels in a column.
    private func promptRows(_ row: EvalService.ResultRow, width: Int, theme: Theme) -> [[Span]] {
        var blocks = [("Question", row.result.input)]
        let targets = row.targets
        if !targets.isEmpty { blocks.append(("Expected", targets.joined(separator: " · "))) }
        let indent = 10
        var rows: [[Span]] = []
        for (label, text) in blocks {
            let lines = UntrustedText.lines(text).map { [Span($0, theme.text)] }
            for (index, spans) in TextView(lines: lines).displayRows(width: width - indent).enumerated() {
                let head = index == 0 ? TextWidth.fit(label, toColumns: indent) : String(repeating: " ", count: indent)
                rows.append([Span(head, theme.title)] + spans)
            }
        }
        return rows
    }

    /// One side's answer: its error, its text, why it stopped short.
    private func answerLines(_ row: EvalService.ResultRow, theme: Theme) -> [[Span]] {
        var lines: [[Span]] = []
        if let error = row.result.error {
            lines += UntrustedText.lines("error: " + error).map { [Span($0, theme.status(.error))] }
        }
        let output = row.result.output ?? ""
        if !output.isEmpty {
            lines += UntrustedText.lines(output).map { [Span($0, theme.text)] }
        } else if row.result.error == nil {
            lines.append([Span("(empty)", theme.dim)])
        }
        if let reason = row.stopReason {
            lines.append([Span("stopped: " + UntrustedText.sanitized(reason), theme.status(.warn))])
        }
        return lines
    }

    /// `✓ contains 1.000  ✗ token_f1 0.214  18 ms`: one side's scorers and latency, packed into
    /// rows of `width` without splitting a score.
    private func scoreLines(_ row: EvalService.ResultRow, width: Int, theme: Theme) -> [[Span]] {
        var pieces: [[Span]] = row.scores.map { score in
            [
                Span(score.passed.map { $0 ? "✓ " : "✗ " } ?? "", theme.status(score.passed == false ? .error : .ok)),
                Span(UntrustedText.sanitized(score.scorer) + " ", theme.text),
                Span(String(format: "%.3f", score.value), theme.accent),
            ]
        }
        if let latency = row.result.latencyMs { pieces.append([Span(String(format: "%.0f ms", latency), theme.dim)]) }
        var rows: [[Span]] = []
        for piece in pieces {
            if let last = rows.last, !last.isEmpty, last.width + 2 + piece.width <= width {
                rows[rows.count - 1] += [Span("  ")] + piece
            } else {
                rows.append(piece.truncated(toColumns: width))
            }
        }
        return rows
    }

    /// The strip under the answers, a line per criterion: `preference  a A  b B  = tie   ben: B`
    /// and `reason  n “…”`, the annotator's own verdict highlighted, the others' dimmed (one
    /// unlike the annotator's marked ≠).
    package func verdictLines(item: ReviewService.Item, opened: ReviewBrowser.Opened, theme: Theme) -> [[Span]] {
        let me = opened.annotator
        var lines: [[Span]] = []
        for criterion in opened.queue.rubric.criteria {
            let mine = item.labels.last { $0.annotator == me && $0.criterion == criterion.name }
            let others = item.labels.filter { $0.annotator != me && $0.criterion == criterion.name }
            var line = [Span(UntrustedText.sanitized(criterion.name), theme.title)]
            line.append(mine == nil ? Span("  ") : Span(" ✓", theme.status(.ok)))
            switch criterion.kind {
            case .categorical(let options):
                for option in options {
                    let chosen = mine?.value == option.name
                    line += [
                        Span(" "),
                        Span(
                            " " + UntrustedText.sanitized(option.key),
                            chosen ? theme.selection.adding(.bold) : theme.key),
                        Span(" " + UntrustedText.sanitized(option.name) + " ", chosen ? theme.selection : theme.text),
                    ]
                }
            case .text:
                line.append(Span(" n ", theme.key))
                line.append(
                    mine.map { Span("“" + UntrustedText.sanitized($0.value) + "”", theme.text) }
                        ?? Span("says why", theme.dim))
            case .boolean, .numeric:
                line.append(Span(" " + (mine.map { UntrustedText.sanitized($0.value) } ?? "—"), theme.text))
            }
            for (index, other) in others.enumerated() {
                let value = criterion.kind == .text ? "“\(other.value)”" : other.value
                let differs = criterion.kind != .text && mine != nil && mine?.value != other.value
                line.append(Span(index == 0 ? "    " : " · ", theme.dim))
                line.append(
                    Span(
                        UntrustedText.sanitized("\(other.annotator): \(value)") + (differs ? " ≠" : ""),
                        differs ? theme.status(.warn) : theme.dim))
            }
            lines.append(line)
        }
        return lines
    }

}

extension ReviewPanel {
    /// A pairwise queue's runs head to head: each run's win rate over the other as a bar (solid to
    /// the interval's lower end, dark to the rate, light to the upper end), the rate, its 95%
    /// interval and W/T/L.
    static func headToHeadLines(_ headToHead: ReviewBrowser.HeadToHead, theme: Theme, width: Int) -> [[Span]] {
        guard !headToHead.winRates.isEmpty else {
            return [
                [
                    Span("head to head", theme.title),
                    Span("  no verdict yet: a, b or = on a pair counts a game", theme.dim),
                ]
            ]
        }
        let games = headToHead.games
        var lines: [[Span]] = [
            [
                Span("head to head", theme.title),
                Span(
                    " · \(games) verdict\(games == 1 ? "" : "s") · win rate (a tie counts half), 95% interval",
                    theme.dim),
            ]
        ]
        let rates = headToHead.winRates
        let versus = Set(rates.map(\.system)).count > 2
        let names = rates.map { UntrustedText.sanitized($0.system) }
        let nameWidth = min(names.map { TextWidth.of($0) }.max() ?? 0, max(12, width - 40))
        let barWidth = max(8, min(24, width - nameWidth - 34))
        for (rate, name) in zip(rates, names) {
            let interval = rate.rate
            var bar: [Span] = []
            for cell in 0..<barWidth {
                let middle = (Double(cell) + 0.5) / Double(barWidth)
                let (glyph, style) =
                    middle <= interval.lower
                    ? ("█", theme.accent)
                    : middle <= interval.estimate
                        ? ("▓", theme.accent) : middle <= interval.upper ? ("▒", theme.dim) : ("░", theme.dim)
                if let last = bar.last, last.style == style, last.text.last == Character(glyph) {
                    bar[bar.count - 1].text += glyph
                } else {
                    bar.append(Span(glyph, style))
                }
            }
            var line = [Span(TextWidth.fit(name, toColumns: nameWidth) + "  ", theme.text)] + bar
            line += [
                Span(String(format: "  %3.0f%%", interval.estimate * 100), theme.key),
                Span(
                    "  "
                        + TextWidth.fit(
                            String(format: "[%.0f–%.0f%%]", interval.lower * 100, interval.upper * 100), toColumns: 10),
                    theme.dim),
                Span("  \(rate.wins)W \(rate.ties)T \(rate.losses)L", theme.text),
            ]
            if versus { line.append(Span("  vs " + UntrustedText.sanitized(rate.opponent), theme.dim)) }
            lines.append(line)
        }
        if headToHead.unreadable > 0 {
            lines.append([
                Span("\(headToHead.unreadable) verdicts left out: their answers are gone", theme.status(.warn))
            ])
        }
        for problem in headToHead.damaged {
            lines.append([
                Span("⚠ verdict left out: " + UntrustedText.sanitized(problem.description), theme.status(.warn))
            ])
        }
        return lines
    }
}

extension Rubric.Kind {
    fileprivate var isCategorical: Bool {
        if case .categorical = self { return true }
        return false
    }
}
