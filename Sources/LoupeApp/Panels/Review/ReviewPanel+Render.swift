import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore
import LoupeTUI

extension ReviewPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let trailing: String
        switch view {
        case .queues:
            trailing =
                overview.map { overview in
                    "\(overview.queues.count) queue\(overview.queues.count == 1 ? "" : "s")"
                        + (overview.annotator.map { " · labelling as \($0)" } ?? "")
                } ?? ""
        case .item:
            trailing = opened.map { "rubric \($0.queue.rubric.name) v\($0.queue.rubric.version)" } ?? ""
        case .calibration:
            trailing = calibration.map { "run \($0.run) · \($0.scorer) vs people on \($0.criterion)" } ?? ""
        }
        let inner = Block(title: "Review", trailingTitle: UntrustedText.sanitized(trailing), focused: context.focused)
            .render(into: &frame, area: area, theme: theme)
        guard inner.width > 30, inner.height > 6 else { return }
        var body = inner
        if editingNote, let note = noteCriterion {
            let line = Rect(x: inner.x, y: inner.maxY - 1, width: inner.width, height: 1)
            noteInput.render(
                into: &frame, area: line,
                prompt: [Span(" " + UntrustedText.sanitized(note.name) + " › ", theme.key.patched(with: theme.input))],
                style: theme.input)
            body.height -= 1
        } else if let error {
            frame.draw(
                "✗ " + UntrustedText.sanitized(error), at: Point(x: inner.x + 1, y: inner.maxY - 1),
                style: theme.status(.error), clip: inner)
            body.height -= 1
        }
        // Each view draws its own area; the panel draws the frame and the line under it.
        switch view {
        case .queues: queuesView.render(into: &frame, area: body, theme: theme, focused: context.focused)
        case .item:
            itemView.render(
                into: &frame, area: body, theme: theme,
                listing: overview?.queues.first { $0.queue.name == openQueue }, calibration: calibration)
        case .calibration:
            calibrationView.render(into: &frame, area: body, theme: theme, focused: context.focused, error: error)
        }
    }

    /// `correct r right · p partly · w wrong   grounded g true · x false   clarity 1…5   note n`,
    /// as many lines as `width` needs: a criterion and its keys are never split across two.
    static func criteriaLines(_ rubric: Rubric, theme: Theme, width: Int) -> [[Span]] {
        var lines: [[Span]] = []
        var line: [Span] = []
        var used = 0
        for criterion in rubric.criteria {
            let spans = criterionSpans(criterion, theme: theme)
            let length = spans.reduce(0) { $0 + TextWidth.of($1.text) }
            if !line.isEmpty, used + 3 + length > width {
                lines.append(line)
                (line, used) = ([], 0)
            }
            if !line.isEmpty {
                line.append(Span("   "))
                used += 3
            }
            line += spans
            used += length
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    /// One criterion and its keys: `correct r right · p partly · w wrong`.
    static func criterionSpans(_ criterion: Rubric.Criterion, theme: Theme) -> [Span] {
        var spans = [Span(UntrustedText.sanitized(criterion.name), theme.text)]
        switch criterion.kind {
        case .categorical(let options):
            for (index, option) in options.enumerated() {
                spans.append(Span(index == 0 ? " " : " · ", theme.dim))
                spans.append(Span(UntrustedText.sanitized(option.key), theme.key))
                spans.append(Span(" " + UntrustedText.sanitized(option.name), theme.dim))
            }
        case .boolean(let trueKey, let falseKey):
            spans += [
                Span(" "), Span(UntrustedText.sanitized(trueKey), theme.key), Span(" true · ", theme.dim),
                Span(UntrustedText.sanitized(falseKey), theme.key), Span(" false", theme.dim),
            ]
        case .numeric(let lower, let upper, _, _):
            spans.append(
                Span(
                    " \(Rubric.Criterion.shown(lower))…\(Rubric.Criterion.shown(upper))",
                    criterion.takesDigit ? theme.key : theme.dim))
        case .text:
            spans += [Span(" "), Span("n", theme.key)]
        }
        return spans
    }
}

extension ReviewPanel.QueuesView {
    // MARK: - Queues

    /// The queues as a table, the selected one's detail below it.
    func render(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        guard let overview else {
            frame.draw("Reading the queues…", at: Point(x: area.x + 1, y: area.y + 1), style: theme.dim, clip: area)
            return
        }
        guard !overview.queues.isEmpty else {
            let lines: [[Span]] = [
                [Span("No review queues yet.", theme.text)],
                [
                    Span("Make one from a run's answers: ", theme.dim),
                    Span(
                        "review queue create NAME --rubric rubrics/answer-quality.yaml --from \"answers run:1\"",
                        theme.accent),
                ],
                [
                    Span("on the ", theme.dim), Span(":", theme.key),
                    Span(" line or the shell; ", theme.dim), Span("--from \"traces errors\"", theme.accent),
                    Span(" reviews traces as the Traces filter keeps them.", theme.dim),
                ],
            ]
            _ = TextView(lines: lines).render(into: &frame, area: area.inset(dx: 1, dy: 1), offset: 0, theme: theme)
            return
        }
        let selected = selectedListing
        let me = overview.annotator
        let detail =
            selected.map {
                Self.detailLines(
                    $0, annotator: me, annotatorProblem: overview.annotatorProblem, theme: theme, width: area.width - 2)
            } ?? []
        // The detail takes what the table leaves, and never less than half.
        let needed = detail.isEmpty ? 0 : TextView(lines: detail).displayRows(width: area.width - 2).count + 1
        let detailHeight = min(needed, max(area.height - overview.queues.count - 2, area.height / 2))
        let parts = area.split(.vertical, [.fill(1), .length(detailHeight)])
        let table = overview.queues.map { listing -> [String] in
            let progress = listing.progress
            return [
                UntrustedText.sanitized(listing.queue.name),
                UntrustedText.sanitized("\(listing.queue.rubric.name) v\(listing.queue.rubric.version)"),
                listing.queue.record.mode == "pairwise"
                    ? "pairs" : UntrustedText.sanitized(listing.queue.record.target),
                String(progress.items), String(progress.labelled), String(progress.shared),
                progress.agreement.map { String(format: "%.0f%%", $0 * 100) } ?? "—",
                listing.yourItems.map { $0 == 0 ? "—" : "\(listing.yourFinished)/\($0)" } ?? "—",
                progress.annotators.map { UntrustedText.sanitized($0.name) + " \($0.finished)/\($0.assigned)" }.joined(
                    separator: " · "),
            ]
        }
        let columns = [
            TableColumn("queue", width: .fill(2)), TableColumn("rubric", width: .fill(2)),
            TableColumn("target", width: .length(6)), TableColumn("items", width: .length(5), alignment: .trailing),
            TableColumn("labelled", width: .length(8), alignment: .trailing),
            TableColumn("shared", width: .length(6), alignment: .trailing),
            TableColumn("agree", width: .length(5), alignment: .trailing),
            TableColumn("you", width: .length(7), alignment: .trailing), TableColumn("annotators", width: .fill(3)),
        ]
        // A narrow terminal keeps the queue, the counts and the people: rubric, target and shared
        // are in the detail below.
        let kept = parts[0].width >= 110 ? Array(columns.indices) : columns.indices.filter { ![1, 2, 5].contains($0) }
        var state = list
        TableView(columns: kept.map { columns[$0] }, rows: table.map { row in kept.map { row[$0] } }, focused: focused)
            .render(into: &frame, area: parts[0], state: &state, theme: theme)
        guard detailHeight > 2 else { return }
        let box = parts[1]
        frame.draw(String(repeating: "─", count: box.width), at: Point(x: box.x, y: box.y), style: theme.dim, clip: box)
        _ = TextView(lines: detail).render(
            into: &frame, area: Rect(x: box.x + 1, y: box.y + 1, width: box.width - 1, height: box.height - 1),
            offset: 0, theme: theme)
    }

    /// The selected queue: where its items come from, its rubric, each annotator's progress, the
    /// keys; `annotatorProblem` when nobody is known to label.
    static func detailLines(
        _ listing: ReviewBrowser.Listing, annotator: String?, annotatorProblem: String?, theme: Theme, width: Int
    ) -> [[Span]] {
        let queue = listing.queue
        let record = queue.record
        let progress = listing.progress
        var lines: [[Span]] = [
            [
                Span(UntrustedText.sanitized(queue.name), theme.title),
                Span(
                    UntrustedText.sanitized(
                        " · \(record.source) · rubric \(queue.rubric.name) v\(queue.rubric.version) "
                            + "[\(record.rubricHash)] · made by \(record.createdBy)"), theme.dim),
            ]
        ]
        lines += ReviewPanel.criteriaLines(queue.rubric, theme: theme, width: width - 1)
        let nameWidth = min(16, progress.annotators.map { TextWidth.of(UntrustedText.sanitized($0.name)) }.max() ?? 0)
        let barWidth = max(4, min(24, width - nameWidth - 24))
        for person in progress.annotators {
            let fraction = person.assigned > 0 ? Double(person.finished) / Double(person.assigned) : 0
            let filled = Int((fraction * Double(barWidth)).rounded(.down))
            lines.append([
                Span(
                    TextWidth.fit(UntrustedText.sanitized(person.name), toColumns: nameWidth) + "  ",
                    person.name == annotator ? theme.key : theme.text),
                Span(String(repeating: "█", count: filled), theme.accent),
                Span(String(repeating: "░", count: barWidth - filled), theme.dim),
                Span(" \(person.finished)/\(person.assigned)", theme.text),
                Span(person.skipped > 0 ? "  \(person.skipped) skipped" : "", theme.dim),
            ])
        }
        var agreement = "\(progress.labelled) of \(progress.items) items labelled, \(progress.shared) by two or more"
        if let share = progress.agreement {
            agreement += String(format: " · people agree on %.0f%%", share * 100)
            if let criterion = progress.agreementCriterion { agreement += " (" + criterion + ")" }
        }
        lines.append([Span(UntrustedText.sanitized(agreement), theme.dim)])
        var keys: [Span]
        if let headToHead = listing.headToHead {
            lines += ReviewPanel.headToHeadLines(headToHead, theme: theme, width: width)
            keys = [Span("enter", theme.key), Span(" judge from your next pair  ", theme.dim)]
        } else {
            keys = [
                Span("enter", theme.key), Span(" label from your next item  ", theme.dim), Span("c", theme.key),
                Span(" judge vs people  ", theme.dim),
            ]
        }
        if annotator == nil, let problem = annotatorProblem {
            keys.append(Span("⚠ " + UntrustedText.sanitized(problem), theme.status(.warn)))
        }
        lines.append(keys)
        return lines
    }
}

extension ReviewPanel.ItemView {
    // MARK: - Item

    /// The item's header, then its context beside the rubric (a pair side by side); with nothing
    /// left to label, what is done and the queue's `listing`. `calibration` is the one the item
    /// was opened from, for its disagreement line.
    func render(
        into frame: inout Frame, area: Rect, theme: Theme, listing: ReviewBrowser.Listing?,
        calibration: ReviewBrowser.Calibration?
    ) {
        guard let opened, opened.queue.name == openQueue else {
            frame.draw(
                "Reading " + UntrustedText.sanitized(openQueue ?? "the queue") + "…",
                at: Point(x: area.x + 1, y: area.y), style: theme.dim, clip: area)
            return
        }
        renderHeader(opened, into: &frame, area: Rect(x: area.x, y: area.y, width: area.width, height: 1), theme: theme)
        let body = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
        guard body.height > 2 else { return }
        guard opened.item != nil else {
            // Nothing to label: what is done, by whom, and where to go.
            var lines = contextLines(theme: theme, calibration: calibration)
            if let listing {
                lines +=
                    [[]]
                    + ReviewPanel.QueuesView.detailLines(
                        listing, annotator: opened.annotator, annotatorProblem: nil, theme: theme, width: body.width - 2
                    )
            }
            _ = TextView(lines: lines).render(into: &frame, area: body.inset(dx: 1, dy: 0), offset: 0, theme: theme)
            return
        }
        if let item = opened.item, let pair = item.pair {
            renderPair(pair, item: item, opened: opened, into: &frame, area: body, theme: theme)
            return
        }
        let rubricWidth = min(46, max(30, body.width * 36 / 100))
        let parts = body.split(.horizontal, [.fill(1), .length(1), .length(rubricWidth)])
        for y in parts[1].y..<parts[1].maxY {
            frame.draw("│", at: Point(x: parts[1].x, y: y), style: theme.border(focused: false))
        }
        // The context's scrollbar, when it has one, is the rule between the panes.
        let context = Rect(x: parts[0].x + 1, y: parts[0].y, width: parts[0].width, height: parts[0].height)
        _ = TextView(lines: contextLines(theme: theme, calibration: calibration)).render(
            into: &frame, area: context, offset: contextOffset, theme: theme)
        let rubric = Rect(x: parts[2].x + 1, y: parts[2].y, width: parts[2].width - 1, height: parts[2].height)
        var lines = rubricLines(theme: theme, descriptions: true)
        if TextView(lines: lines).displayRows(width: rubric.width - 1).count > rubric.height {
            lines = rubricLines(theme: theme, descriptions: false)
        }
        _ = TextView(lines: lines).render(into: &frame, area: rubric, offset: 0, theme: theme)
    }

    /// `agent-answers · ana · item 3/12 · you 2/12 done · 12 shared · people agree 83%`, and the
    /// queue as a strip of dots (labelled, open, this one) where it fits.
    private func renderHeader(_ opened: ReviewBrowser.Opened, into frame: inout Frame, area: Rect, theme: Theme) {
        let progress = opened.progress
        var spans: [Span] = [
            Span(" " + UntrustedText.sanitized(opened.queue.name), theme.title), Span(" · ", theme.dim),
            Span(UntrustedText.sanitized(opened.annotator), theme.key),
        ]
        if let index = opened.index { spans.append(Span(" · item \(index + 1)/\(opened.keys.count)", theme.text)) }
        if opened.isAssigned {
            spans.append(Span(" · you \(opened.finished.count)/\(opened.keys.count) done", theme.text))
        } else {
            spans.append(Span(" · not assigned to you", theme.status(.warn)))
        }
        // What the queue as a whole is at gives way first on a narrow terminal.
        var shared = [Span(" · \(progress.shared) shared", theme.dim)]
        if let agreement = progress.agreement {
            shared.append(Span(String(format: " · people agree %.0f%%", agreement * 100), theme.dim))
        }
        while !shared.isEmpty, (spans + shared).width > area.width - 1 { shared.removeFirst() }
        spans += shared
        let used = frame.draw(spans, at: Point(x: area.x, y: area.y), clip: area)
        let room = area.width - used - 3
        guard opened.keys.count <= room else { return }
        let current = opened.item?.key
        var strip: [Span] = []
        for key in opened.keys {
            let done = opened.finished.contains(key)
            strip.append(
                Span(
                    key == current ? "◆" : done ? "●" : "○",
                    key == current ? theme.key : done ? theme.status(.ok) : theme.dim))
        }
        frame.draw(strip, at: Point(x: area.maxX - opened.keys.count - 1, y: area.y), clip: area)
    }

    /// The item's context: what was asked, the answer, what was expected, the scorers' verdicts,
    /// the trace and its steps. Every text from the workspace is sanitised. `calibration` is the
    /// one the item was opened from, whose verdict on it is said.
    package func contextLines(theme: Theme, calibration: ReviewBrowser.Calibration?) -> [[Span]] {
        guard let opened else { return [] }
        guard let item = opened.item else {
            let name = UntrustedText.sanitized(opened.queue.name)
            return [
                opened.isAssigned
                    ? [Span("✓ Nothing left for you in \(name).", theme.status(.ok))]
                    : [Span("You have walked every item of \(name).", theme.status(.ok))],
                [
                    Span(
                        opened.isAssigned
                            ? "You finished \(opened.finished.count) of your \(opened.keys.count) items."
                            : "None is assigned to you; you labelled \(opened.finished.count) of \(opened.keys.count).",
                        theme.text)
                ],
                [],
                [Span("[", theme.key), Span(" and ", theme.dim), Span("]", theme.key)]
                    + (opened.queue.record.mode == "pairwise"
                        ? [Span(" walk the pairs again, ", theme.dim)]
                        : [
                            Span(" walk the items again, ", theme.dim), Span("c", theme.key),
                            Span(" compares the judge with the labels, ", theme.dim),
                        ]) + [Span("esc", theme.key), Span(" goes back to the queues.", theme.dim)],
            ]
        }
        var lines: [[Span]] = []
        func section(_ title: String, _ trailing: String = "") {
            if !lines.isEmpty { lines.append([]) }
            lines.append([Span(title, theme.title), Span(trailing, theme.dim)])
        }
        func text(_ value: String, _ style: Style) {
            for line in UntrustedText.lines(value) { lines.append([Span(line, style)]) }
        }
        var head = item.key
        let finished = opened.finished.contains(item.key)
        if let result = item.answer?.result {
            if let latency = result.latencyMs { head += String(format: " · %.0f ms", latency) }
            if let input = result.inputTokens, let output = result.outputTokens {
                head += " · tokens \(input)/\(output)"
            }
        }
        lines.append([
            Span(UntrustedText.sanitized(head), theme.dim),
            Span(finished ? "  ✓ labelled" : "", theme.status(.ok)),
        ])
        // A stored column that did not read back: the item shows without it, and says which.
        for problem in item.unreadable {
            lines.append([Span(UntrustedText.sanitized("⚠ " + problem.description), theme.status(.warn))])
        }
        if from == .calibration, let calibration,
            let disagreement = calibration.disagreements.first(where: { $0.key == item.key })
        {
            lines.append([
                Span(
                    "people \(disagreement.humanPasses ? "pass" : "fail") · judge "
                        + UntrustedText.sanitized(calibration.scorer)
                        + " \(disagreement.judgePasses ? "pass" : "fail")"
                        + String(format: " (%.3f)", disagreement.judgeValue) + " · esc back to the calibration",
                    theme.status(.warn))
            ])
        }
        if let pair = item.pair {
            section("Question")
            text(pair.left.result.input, theme.text)
            if !pair.left.targets.isEmpty {
                section(pair.left.targets.count == 1 ? "Expected" : "Expected (any of)")
                for target in pair.left.targets { text(target, theme.text) }
            }
            section("A", "  (left)")
            text(pair.left.shownOutput.isEmpty ? "(empty)" : pair.left.shownOutput, theme.text)
            section("B", "  (right)")
            text(pair.right.shownOutput.isEmpty ? "(empty)" : pair.right.shownOutput, theme.text)
        } else if let row = item.answer {
            let result = row.result
            section("Question")
            text(result.input, theme.text)
            section("Answer")
            if let error = result.error { text("error: " + error, theme.status(.error)) }
            let output = result.output ?? ""
            text(output.isEmpty ? "(empty)" : output, output.isEmpty ? theme.dim : theme.text)
            if let reason = row.stopReason {
                lines.append([Span("stopped: " + UntrustedText.sanitized(reason), theme.status(.warn))])
            }
            let targets = row.targets
            if !targets.isEmpty {
                section(targets.count == 1 ? "Expected" : "Expected (any of)")
                for target in targets { text(target, theme.text) }
            }
            if !row.scores.isEmpty {
                section("Scorers")
                let width = min(16, row.scores.map { TextWidth.of(UntrustedText.sanitized($0.scorer)) }.max() ?? 0)
                for score in row.scores {
                    let mark = score.passed.map { $0 ? "✓ " : "✗ " } ?? "  "
                    lines.append([
                        Span(mark, score.passed == false ? theme.status(.error) : theme.status(.ok)),
                        Span(TextWidth.fit(UntrustedText.sanitized(score.scorer), toColumns: width) + " ", theme.text),
                        Span(String(format: "%.3f", score.value), theme.accent),
                        Span(
                            score.explanation.isEmpty
                                ? ""
                                : "  "
                                    + UntrustedText.sanitized(
                                        score.explanation.replacingOccurrences(of: "\n", with: " ")),
                            theme.dim),
                    ])
                }
            }
        }
        if let step = item.step {
            let span = step.span
            section("Step", "  span \(step.index) of \(step.count) in trace #\(step.traceID) · t opens it in Traces")
            let failed = span.status.isError
            lines.append([
                Span(span.kind.rawValue + " ", failed ? theme.status(.error) : theme.accent),
                Span(UntrustedText.sanitized(span.name), failed ? theme.status(.error) : theme.text),
                Span(
                    (span.model.map { " · " + UntrustedText.sanitized($0) } ?? "") + "  "
                        + TraceText.duration(span.durationNs), theme.dim),
            ])
            if !span.input.isEmpty {
                section("Input", "  the conversation as it stood")
                for message in span.input.suffix(8) {
                    lines.append([Span(UntrustedText.sanitized(message.role), theme.key)])
                    text(message.text, theme.text)
                }
            }
            if let tool = span.tool {
                section("Tool call")
                text(tool.name + " " + tool.arguments, theme.text)
                if let result = tool.result {
                    section("Result")
                    text(result, theme.text)
                }
                if let error = tool.error {
                    section("Error")
                    text(error, theme.status(.error))
                }
            }
            if span.output.contains(where: { !$0.text.isEmpty || !$0.toolCalls.isEmpty }) {
                section("Output")
                for message in span.output {
                    if !message.text.isEmpty { text(message.text, theme.text) }
                    for call in message.toolCalls { text("→ " + call.name + " " + call.arguments, theme.accent) }
                }
            }
        } else if let session = item.session {
            section("Session", "  \(session.turns.count) turns · \(session.steps) steps")
            lines.append([Span(UntrustedText.sanitized(session.id), theme.dim)])
            for (index, turn) in session.turns.enumerated() {
                lines.append([
                    Span(TextWidth.fit(String(index + 1), toColumns: 3), theme.dim),
                    Span(UntrustedText.sanitized(turn.name), turn.errorCount > 0 ? theme.status(.warn) : theme.text),
                    Span("  #\(turn.id) · " + TraceText.duration(turn.durationNs), theme.dim),
                ])
            }
        } else if let hit = item.hit {
            section("Query")
            text(hit.query, theme.text)
            section(
                "Hit",
                "  rank \(hit.hit.rank) · \(UntrustedText.sanitized(hit.retriever)) · document "
                    + UntrustedText.sanitized("\(hit.hit.documentID) chunk \(hit.hit.ordinal)"))
            lines.append([Span(UntrustedText.sanitized(hit.hit.shownTitle), theme.accent)])
            lines.append([])
            lines += RetrievalPanel.highlighted(
                hit.hit.text, terms: Set(hit.hit.matchedTerms), stem: hit.stem, theme: theme)
            if !hit.hit.matchedTerms.isEmpty {
                lines.append([
                    Span("matched: ", theme.dim),
                    Span(UntrustedText.sanitized(hit.hit.matchedTerms.joined(separator: " ")), theme.match),
                ])
            }
        }
        if let trace = item.trace, item.session == nil {
            section("Trace", "  t opens it in Traces")
            var said = "#\(trace.id)"
            // An agent's trace is usually named after the question, already shown above.
            if trace.name != item.answer?.result.input { said += " " + UntrustedText.sanitized(trace.name) }
            said += " · \(trace.stepCount) steps · " + TraceText.duration(trace.durationNs)
            if let input = trace.inputTokens, let output = trace.outputTokens { said += " · tokens \(input)/\(output)" }
            if trace.errorCount > 0 { said += " · \(trace.errorCount) error" + (trace.errorCount == 1 ? "" : "s") }
            lines.append([Span(said, trace.errorCount > 0 ? theme.status(.warn) : theme.text)])
            if let problem = opened.stepsProblem {
                lines.append([Span("⚠ " + UntrustedText.sanitized(problem), theme.status(.warn))])
            }
            for (index, step) in opened.steps.enumerated() {
                let failed = step.status == "error"
                var name = step.toolName ?? step.model ?? step.name
                if step.kind == "llm", let model = step.model, !step.name.contains(model) {
                    name = step.name + " · " + model
                }
                // The step under review, when the item is one.
                let current = item.step?.span.spanID == step.spanID
                lines.append([
                    Span(
                        TextWidth.fit(current ? "▶" : String(index + 1), toColumns: 3),
                        current ? theme.key : theme.dim),
                    Span(
                        TextWidth.fit(UntrustedText.sanitized(step.kind), toColumns: 6),
                        failed ? theme.status(.error) : theme.accent),
                    Span(UntrustedText.sanitized(name), failed ? theme.status(.error) : theme.text),
                    Span("  " + TraceText.duration(step.endNs.map { $0 - step.startNs }), theme.dim),
                ])
            }
            if trace.stepCount > opened.steps.count, !opened.steps.isEmpty {
                lines.append([Span("   … \(trace.stepCount - opened.steps.count) more steps in Traces", theme.dim)])
            }
        } else if let traceID = item.answer?.result.traceID {
            section("Trace")
            lines.append([Span("#\(traceID) (no longer in the workspace)", theme.dim)])
        }
        return lines
    }

    /// The rubric beside the item: each criterion with its keys, the annotator's value marked,
    /// the others' labels dimmed under it.
    package func rubricLines(theme: Theme, descriptions: Bool) -> [[Span]] {
        guard let opened else { return [] }
        let labels = opened.item?.labels ?? []
        let me = opened.annotator
        var lines: [[Span]] = []
        for criterion in opened.queue.rubric.criteria {
            let mine = labels.last { $0.annotator == me && $0.criterion == criterion.name }
            if !lines.isEmpty { lines.append([]) }
            var head = [Span(UntrustedText.sanitized(criterion.name), theme.title)]
            if mine != nil {
                head.append(Span(" ✓", theme.status(.ok)))
            } else if !criterion.required {
                head.append(Span(" optional", theme.dim))
            }
            lines.append(head)
            if descriptions, let description = criterion.description {
                lines.append([Span(UntrustedText.sanitized(description), theme.dim)])
            }
            func choice(_ key: String, _ name: String, chosen: Bool) -> [Span] {
                let style = chosen ? theme.selection : theme.text
                return [
                    Span(UntrustedText.sanitized(key), chosen ? theme.selection.adding(.bold) : theme.key),
                    Span(" " + UntrustedText.sanitized(name) + " ", style),
                ]
            }
            switch criterion.kind {
            case .categorical(let options):
                var line: [Span] = []
                for option in options {
                    line += [Span(" ")] + choice(option.key, option.name, chosen: mine?.value == option.name)
                }
                lines.append(line)
            case .boolean(let trueKey, let falseKey):
                lines.append(
                    [Span(" ")] + choice(trueKey, "true", chosen: mine?.value == "true") + [Span(" ")]
                        + choice(falseKey, "false", chosen: mine?.value == "false"))
            case .numeric(let lower, let upper, _, _):
                if criterion.takesDigit, lower <= upper {
                    var line: [Span] = []
                    for digit in Int(lower)...Int(upper) {
                        let chosen = mine?.number == Double(digit)
                        line.append(
                            Span(" \(digit) ", chosen ? theme.selection.adding(.bold) : theme.key))
                    }
                    lines.append(line)
                } else {
                    lines.append([
                        Span(
                            "\(Rubric.Criterion.shown(lower))…\(Rubric.Criterion.shown(upper)): "
                                + (mine.map { UntrustedText.sanitized($0.value) } ?? "—"),
                            mine == nil ? theme.dim : theme.selection),
                        Span("  (:review label …)", theme.dim),
                    ])
                }
            case .text:
                if let mine {
                    lines.append([
                        Span(" n ", theme.key), Span("“" + UntrustedText.sanitized(mine.value) + "”", theme.text),
                    ])
                } else {
                    lines.append([Span(" n ", theme.key), Span("writes a note", theme.dim)])
                }
            }
            for other in labels where other.annotator != me && other.criterion == criterion.name {
                let value = criterion.kind == .text ? "“\(other.value)”" : other.value
                // Another person's verdict unlike one's own is what a second look is for.
                let differs = criterion.kind != .text && mine != nil && mine?.value != other.value
                lines.append([
                    Span(
                        " " + UntrustedText.sanitized("\(other.annotator): \(value)") + (differs ? "  ≠" : ""),
                        differs ? theme.status(.warn) : theme.dim)
                ])
            }
        }
        return lines
    }
}

extension ReviewPanel.CalibrationView {
    // MARK: - Calibration

    /// The scorers, the report, then the disagreements; `error` (the panel's) in place of the
    /// "calibrating…" line when the calibration failed.
    func render(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool, error: String?) {
        guard let calibration else {
            if error == nil {
                frame.draw(
                    "Calibrating the queue's run against its labels…", at: Point(x: area.x + 1, y: area.y),
                    style: theme.dim, clip: area)
            }
            return
        }
        var scorers: [Span] = [Span(" scorer ", theme.dim)]
        for scorer in calibration.scorers.isEmpty ? [calibration.scorer] : calibration.scorers {
            let chosen = scorer == calibration.scorer
            scorers.append(Span(" " + UntrustedText.sanitized(scorer) + " ", chosen ? theme.selection : theme.text))
        }
        if calibration.scorers.count > 1 { scorers += [Span("   "), Span("s", theme.key), Span(" next", theme.dim)] }
        frame.draw(scorers, at: Point(x: area.x, y: area.y), clip: area)
        let count = calibration.disagreements.count
        let below = Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1)
        // The list follows the report, one line apart, when both fit; else the report gives way
        // (ctrl+d scrolls it) and the list keeps a third of the room.
        let reportRows = TextView(lines: calibration.summary.map { [Span($0)] }).displayRows(width: below.width - 3)
            .count
        let listHeight =
            count == 0
            ? max(1, below.height - reportRows - 1)
            : max(min(count + 2, max(5, below.height / 3)), below.height - reportRows - 1)
        let parts = below.split(.vertical, [.fill(1), .length(listHeight)])
        let report = calibration.summary.map { line -> [Span] in
            let heading = ["agreement ", "confusion ", "pass rate "].contains { line.hasPrefix($0) }
            return [Span(line, heading ? theme.title : line.hasPrefix("run ") ? theme.accent : theme.text)]
        }
        _ = TextView(lines: report).render(
            into: &frame, area: parts[0].inset(dx: 1, dy: 0), offset: reportOffset, theme: theme)
        let list = parts[1]
        let top = list.y
        guard calibration.labelled > 0 else {
            // No label is no evidence: "agree on every labelled answer" would be true of nothing.
            let criterion = UntrustedText.sanitized(calibration.criterion)
            frame.draw(
                "nothing labelled yet on \(criterion): no answer to hold the judge against",
                at: Point(x: list.x + 1, y: top), style: theme.status(.warn), clip: list)
            frame.draw(
                [
                    Span("esc", theme.key), Span(" queues · ", theme.dim), Span("enter", theme.key),
                    Span(" your next item; its rubric keys label it · ", theme.dim), Span("c", theme.key),
                    Span(" again", theme.dim),
                ], at: Point(x: list.x + 1, y: top + 1), clip: list)
            return
        }
        guard count > 0 else {
            frame.draw(
                "no disagreement: the judge and the people's majority agree on every labelled answer",
                at: Point(x: list.x + 1, y: top), style: theme.status(.ok), clip: list)
            return
        }
        frame.draw(
            [
                Span("disagreements: \(count)", theme.title), Span("  enter", theme.key),
                Span(" opens the item to look again", theme.dim),
            ], at: Point(x: list.x + 1, y: top), clip: list)
        // An item answered in several epochs says which epoch disagrees.
        let items = Dictionary(calibration.disagreements.map { ($0.itemID, 1) }, uniquingKeysWith: +)
        let rows = calibration.disagreements.map { entry -> [String] in
            [
                UntrustedText.sanitized(entry.itemID) + (items[entry.itemID, default: 0] > 1 ? " #\(entry.epoch)" : ""),
                entry.humanPasses ? "pass" : "fail",
                (entry.judgePasses ? "pass " : "fail ") + String(format: "%.3f", entry.judgeValue),
                UntrustedText.sanitized(
                    entry.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")),
                UntrustedText.sanitized(entry.input.replacingOccurrences(of: "\n", with: " ")),
            ]
        }
        var state = disagreementList
        TableView(
            columns: [
                TableColumn("item", width: .length(12)), TableColumn("people", width: .length(6)),
                TableColumn("judge", width: .length(10)), TableColumn("labels", width: .fill(1)),
                TableColumn("input", width: .fill(2)),
            ], rows: rows, focused: focused
        ).render(
            into: &frame, area: Rect(x: list.x, y: top + 1, width: list.width, height: list.maxY - top - 1),
            state: &state, theme: theme)
    }
}
