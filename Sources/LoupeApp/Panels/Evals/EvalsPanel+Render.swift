import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeRetrieval
import LoupeStore
import LoupeTUI

extension EvalsPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let trailing: String
        switch view {
        case .runs:
            let count = overview?.runs.count ?? 0
            trailing = "\(count) run\(count == 1 ? "" : "s")" + (baseline.map { " · baseline #\($0)" } ?? "")
        case .answers, .answer: trailing = detail.map { "run \($0.listing.id) · \($0.listing.run.suite)" } ?? "loading…"
        case .compare: trailing = comparison.map { "run \($0.b.id) vs baseline \($0.a.id)" } ?? ""
        }
        let inner = Block(title: "Evals", trailingTitle: UntrustedText.sanitized(trailing), focused: context.focused)
            .render(into: &frame, area: area, theme: theme)
        guard inner.width > 30, inner.height > 6 else { return }
        var body = inner
        if let error {
            frame.draw(
                "✗ " + UntrustedText.sanitized(error), at: Point(x: inner.x + 1, y: inner.maxY - 1),
                style: theme.status(.error), clip: inner)
            body = Rect(x: inner.x, y: inner.y, width: inner.width, height: inner.height - 1)
        }
        switch view {
        case .runs: renderRuns(into: &frame, area: body, theme: theme, focused: context.focused)
        case .answers: renderAnswers(into: &frame, area: body, theme: theme, focused: context.focused)
        case .answer: renderAnswer(into: &frame, area: body, theme: theme)
        case .compare: renderComparison(into: &frame, area: body, theme: theme, focused: context.focused)
        }
    }

    private func renderRuns(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        guard let overview else {
            frame.draw("Reading the workspace…", at: Point(x: area.x + 1, y: area.y + 1), style: theme.dim, clip: area)
            return
        }
        let rows = self.rows
        if rows.isEmpty {
            let lines: [[Span]] = [
                [Span("No eval runs or suites yet.", theme.text)],
                [
                    Span("Run a suite with ", theme.dim), Span("loupe eval run SUITE.yaml", theme.accent),
                    Span(", or put suite files in ", theme.dim), Span("evals/", theme.accent),
                    Span(" and press ", theme.dim), Span("r", theme.key), Span(".", theme.dim),
                ],
                [
                    Span("Inspect logs imported with ", theme.dim), Span("loupe trace import", theme.accent),
                    Span(" show here too.", theme.dim),
                ],
            ]
            for (index, line) in lines.enumerated() {
                frame.draw(line, at: Point(x: area.x + 1, y: area.y + 1 + index), clip: area)
            }
            return
        }
        // The selected run's statistics: a rule, provenance, a line per scorer, the keys.
        let needed = (selectedRun.map { $0.scorers.count + $0.unreadable.count } ?? 0) + 4
        let summaryHeight = min(needed, max(0, area.height / 2 - 1))
        let parts = area.split(.vertical, [.fill(1), .length(summaryHeight)])
        let formatter = DateFormatter()
        formatter.dateFormat = "MM-dd HH:mm"
        let bySeries = Dictionary(grouping: overview.runs, by: \.series)
        let table = rows.map { row -> [String] in
            switch row {
            case .run(let listing):
                let run = listing.run
                let headline = listing.headline
                let trend = (bySeries[listing.series] ?? []).filter { $0.id <= listing.id }.compactMap {
                    $0.headline?.interval.estimate
                }
                return [
                    baseline == listing.id ? "b" : run.status == "running" ? "●" : "", String(listing.id),
                    UntrustedText.sanitized((listing.label.map { $0 + " · " } ?? "") + Self.runName(run)),
                    run.targetKind, run.status,
                    "\(listing.answered)/\(run.planned)", headline.map { UntrustedText.sanitized($0.scorer) } ?? "—",
                    headline.map { String(format: "%.3f", $0.interval.estimate) } ?? "—",
                    headline.map { Self.intervalText($0.interval) } ?? "",
                    trend.count > 1 ? Sparkline(values: trend).glyphs(width: 10) : "",
                    formatter.string(from: run.startedAt),
                ]
            case .suite(let path):
                return [
                    "", "—", UntrustedText.sanitized((path as NSString).lastPathComponent), "suite", "not run", "", "",
                    "", "", "", UntrustedText.sanitized(path),
                ]
            }
        }
        let columns = [
            TableColumn("", width: .length(1)), TableColumn("run", width: .length(4), alignment: .trailing),
            TableColumn("suite", width: .fill(1)), TableColumn("target", width: .length(9)),
            TableColumn("status", width: .length(9)), TableColumn("n", width: .length(8), alignment: .trailing),
            TableColumn("headline", width: .length(10)), TableColumn("value", width: .length(6), alignment: .trailing),
            TableColumn("95% CI", width: .length(14)), TableColumn("trend", width: .length(10)),
            TableColumn("when", width: .length(11)),
        ]
        // Narrow terminals keep the suite's name: target, trend and date give way first.
        let kept = parts[0].width >= 110 ? Array(columns.indices) : columns.indices.filter { ![3, 9, 10].contains($0) }
        var state = runsList
        TableView(columns: kept.map { columns[$0] }, rows: table.map { row in kept.map { row[$0] } }, focused: focused)
            .render(into: &frame, area: parts[0], state: &state, theme: theme)
        guard summaryHeight > 2 else { return }
        let box = parts[1]
        frame.draw(String(repeating: "─", count: box.width), at: Point(x: box.x, y: box.y), style: theme.dim, clip: box)
        guard let listing = selectedRun else {
            frame.draw(
                [Span("A suite not run yet: press ", theme.dim), Span("r", theme.key), Span(" to run it.", theme.dim)],
                at: Point(x: box.x + 1, y: box.y + 1), clip: box)
            return
        }
        var lines: [[Span]] = []
        let run = listing.run
        var provenance =
            "run \(listing.id)" + (listing.label.map { " “\($0)”" } ?? "")
            + " · \(run.status) · epochs \(run.epochs) · loupe \(run.loupeVersion)"
        if let git = run.gitRevision { provenance += " · git \(git)" }
        if !run.suiteHash.isEmpty {
            provenance += " · suite \(run.suiteHash.prefix(8)) · data \(run.datasetHash.prefix(8))"
        }
        if let parent = run.parentRunID { provenance += " · re-run of \(parent)" }
        if run.source == "inspect", let log = run.suiteFile { provenance += " · log \(log)" }
        let summary = listing.summary
        provenance += " · \(summary.items) items, \(summary.rows) answers, \(summary.errors) errors"
        lines.append([Span(UntrustedText.sanitized(provenance), theme.dim)])
        if let state = listing.searched {
            lines.append([Span("searched " + UntrustedText.sanitized(state), theme.dim)])
        }
        // A run column that does not read back is named, not left out.
        for problem in listing.unreadable {
            lines.append([Span("⚠ " + UntrustedText.sanitized(problem.description), theme.status(.warn))])
        }
        if let workers = listing.workersLine {
            lines.append([Span(UntrustedText.sanitized(workers), theme.dim)])
        }
        for name in listing.scorers {
            guard let s = summary.scorers.first(where: { $0.scorer == name }) else { continue }
            let i = s.interval
            var line = [
                Span(TextWidth.fit(UntrustedText.sanitized(name), toColumns: 14, alignment: .leading), theme.text),
                Span(" " + s.statistic, theme.dim), Span(String(format: " %.3f ", i.estimate), theme.accent),
                Span(String(format: "[%.3f, %.3f] ", i.lower, i.upper) + "\(i.method) n \(i.n)", theme.text),
                Span(String(format: "   bootstrap [%.3f, %.3f]", s.bootstrap.lower, s.bootstrap.upper), theme.dim),
            ]
            if !s.passAtK.isEmpty {
                line.append(
                    Span(
                        "   pass@k " + s.passAtK.map { String(format: "%.2f", $0.passAt) }.joined(separator: " ")
                            + "  pass^k " + s.passAtK.map { String(format: "%.2f", $0.passHat) }.joined(separator: " "),
                        theme.dim))
            }
            if let c = s.calibration {
                line.append(
                    Span(String(format: "   ECE %.3f Brier %.3f", c.expectedCalibrationError, c.brierScore), theme.dim))
            }
            lines.append(line)
        }
        // The keys stay on the box's last row whatever else gives way: with many scorers the
        // lines above are cut (saying how many), never the only place b and c are named.
        let room = box.height - 2
        if lines.count > room, room > 0 {
            let cut = lines.count - room + 1
            lines =
                Array(lines.prefix(room - 1)) + [[Span("… \(cut) more lines: a taller window shows them", theme.dim)]]
        }
        lines.append([
            Span("enter", theme.key), Span(" answers  ", theme.dim), Span("r", theme.key), Span(" run  ", theme.dim),
            Span("R", theme.key), Span(" re-run failed  ", theme.dim), Span("b", theme.key),
            Span(" baseline  ", theme.dim), Span("c", theme.key), Span(" compare  ", theme.dim),
            Span("e", theme.key), Span(" export", theme.dim),
        ])
        for (index, line) in lines.suffix(max(0, box.height - 1)).enumerated() {
            frame.draw(line, at: Point(x: box.x + 1, y: box.y + 1 + index), clip: box)
        }
    }

    private func renderAnswers(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        guard let detail else {
            frame.draw("Reading the run…", at: Point(x: area.x + 1, y: area.y + 1), style: theme.dim, clip: area)
            return
        }
        let shown = answers
        let scorers = detail.listing.scorers
        let header: [Span] = [
            Span("\(shown.count) of \(detail.rows.count) answers", theme.text),
            Span("  filter ", theme.dim), Span(filter.rawValue, theme.accent), Span(" (f)", theme.dim),
            Span("  sort ", theme.dim), Span(order.rawValue, theme.accent), Span(" (s)", theme.dim),
            Span("  enter", theme.key), Span(" verdicts  ", theme.dim), Span("t", theme.key),
            Span(" trace/ranking", theme.dim),
        ]
        frame.draw(header, at: Point(x: area.x + 1, y: area.y), clip: area)
        let table = shown.map { row -> [String] in
            var cells = [UntrustedText.sanitized(row.result.itemID), String(row.result.epoch)]
            for scorer in scorers {
                guard let score = row.score(scorer) else {
                    cells.append("—")
                    continue
                }
                cells.append(String(format: "%.2f", score.value) + (score.passed.map { $0 ? " ✓" : " ✗" } ?? ""))
            }
            cells.append(row.result.latencyMs.map { String(format: "%.0fms", $0) } ?? "")
            cells.append(row.result.evidence)
            cells.append(UntrustedText.sanitized(row.shownOutput.replacingOccurrences(of: "\n", with: " ")))
            return cells
        }
        var columns = [
            TableColumn("item", width: .length(12)), TableColumn("ep", width: .length(2), alignment: .trailing),
        ]
        for scorer in scorers {
            columns.append(
                TableColumn(
                    TextWidth.truncate(UntrustedText.sanitized(scorer), toColumns: 9), width: .length(9),
                    alignment: .trailing))
        }
        columns += [
            TableColumn("latency", width: .length(7), alignment: .trailing),
            TableColumn("evidence", width: .length(11)),
            TableColumn("output", width: .fill(1)),
        ]
        var state = answersList
        TableView(columns: columns, rows: table, focused: focused).render(
            into: &frame, area: Rect(x: area.x, y: area.y + 1, width: area.width, height: area.height - 1),
            state: &state, theme: theme)
    }

    /// The drill-down's lines: input, targets, output, then each scorer's verdict.
    package func answerLines(theme: Theme) -> [[Span]] {
        guard let row = openAnswer else { return [] }
        return Self.answerLines(row, theme: theme)
    }

    /// The baseline's answer to the open item, when it was opened from a comparison.
    package var baselineAnswer: EvalService.ResultRow? {
        guard answerFrom == .compare, let row = openAnswer else { return nil }
        return baselineDetail?.rows.first {
            $0.result.itemID == row.result.itemID && $0.result.epoch == row.result.epoch
        }
    }

    package static func answerLines(_ row: EvalService.ResultRow, theme: Theme) -> [[Span]] {
        let result = row.result
        var lines: [[Span]] = []
        func section(_ title: String) {
            if !lines.isEmpty { lines.append([]) }
            lines.append([Span(title, theme.title)])
        }
        func text(_ value: String, _ style: Style) {
            for line in UntrustedText.sanitized(value).split(separator: "\n", omittingEmptySubsequences: false) {
                lines.append([Span("  " + line, style)])
            }
        }
        var head = "item \(result.itemID) · epoch \(result.epoch)"
        if let latency = result.latencyMs { head += String(format: " · %.0f ms", latency) }
        if let input = result.inputTokens, let output = result.outputTokens { head += " · tokens \(input)/\(output)" }
        if let cost = result.cost { head += String(format: " · $%.5f", cost) }
        lines.append([Span(UntrustedText.sanitized(head), theme.accent)])
        // A stored column that does not read back is named, not shown as an empty field.
        for problem in row.unreadable {
            lines.append([Span("⚠ " + UntrustedText.sanitized(problem.description), theme.status(.warn))])
        }
        section("Input")
        text(result.input, theme.text)
        let targets = row.targets
        if !targets.isEmpty {
            section(targets.count == 1 ? "Target" : "Targets")
            for target in targets { text(target, theme.text) }
        }
        if let error = result.error {
            section("Error")
            text(error, theme.status(.error))
        }
        section("Output")
        let empty = (result.output ?? "").isEmpty
        text(empty ? "(empty)" : result.output ?? "", empty ? theme.dim : theme.text)
        if let reason = row.stopReason {
            lines.append([
                Span(empty ? "  no final answer: " : "  stopped early: ", theme.status(.warn)),
                Span(UntrustedText.sanitized(reason), theme.status(.warn)),
            ])
        }
        section("Verdicts")
        for score in row.scores {
            let mark = score.passed.map { $0 ? "✓ pass" : "✗ fail" } ?? ""
            lines.append([
                Span(
                    "  " + TextWidth.fit(UntrustedText.sanitized(score.scorer), toColumns: 14, alignment: .leading),
                    theme.text),
                Span(String(format: " %.3f ", score.value), theme.accent),
                Span(mark, theme.status(score.passed == false ? .error : .ok)),
            ])
            text("  " + score.explanation, theme.dim)
            if let judgement = row.judgements[score.scorer] {
                lines.append([Span("    judge prompt:", theme.dim)])
                text("    " + judgement.prompt, theme.dim)
                lines.append([Span("    raw verdict:", theme.dim)])
                text("    " + judgement.verdict, theme.text)
            }
        }
        lines.append([])
        if let trace = result.traceID {
            lines.append([Span("t", theme.key), Span(" opens trace \(trace) in Traces (ctrl+o comes back)", theme.dim)])
        } else if let record = result.retrievalRecordID {
            lines.append([
                Span("t", theme.key),
                Span(" opens the ranking (record \(record)) in Retrieval (ctrl+o comes back)", theme.dim),
            ])
        }
        return lines
    }

    /// One answer; opened from a comparison, the baseline's (A) and the run's (B) side by side,
    /// as promptfoo shows two outputs for the same test.
    private func renderAnswer(into frame: inout Frame, area: Rect, theme: Theme) {
        guard let baseline = baselineAnswer, let row = openAnswer, let comparison, area.width >= 60 else {
            let view = TextView(lines: answerLines(theme: theme))
            _ = view.render(into: &frame, area: area.inset(dx: 1, dy: 0), offset: answerOffset, theme: theme)
            return
        }
        let halves = area.split(.horizontal, [.percentage(50), .fill(1)])
        for (half, side, title) in [
            (halves[0], baseline, "A · run \(comparison.a.id) (baseline)"),
            (halves[1], row, "B · run \(comparison.b.id)"),
        ] {
            let inner = Block(title: title, focused: false).render(into: &frame, area: half, theme: theme)
            _ = TextView(lines: Self.answerLines(side, theme: theme)).render(
                into: &frame, area: inner.inset(dx: 1, dy: 0), offset: answerOffset, theme: theme)
        }
    }

    private func renderComparison(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        guard let comparison else { return }
        var y = area.y
        // Which run is which, as promptfoo and Inspect head a comparison's columns with what ran.
        let (runA, runB) = ("run \(comparison.a.id)", "run \(comparison.b.id)")
        frame.draw(
            [
                Span("A ", theme.key), Span(runA + " (baseline) ", theme.title),
                Span(UntrustedText.sanitized(Self.comparedName(comparison.a)), theme.dim), Span("   B ", theme.key),
                Span(runB + " ", theme.title),
                Span(UntrustedText.sanitized(Self.comparedName(comparison.b)), theme.dim),
            ], at: Point(x: area.x + 1, y: y), clip: area)
        y += 1
        for warning in comparison.warnings {
            frame.draw(
                "⚠ " + UntrustedText.sanitized(warning), at: Point(x: area.x + 1, y: y), style: theme.status(.warn),
                clip: area)
            y += 1
        }
        let metrics = comparison.metrics.metrics.map { metric -> [String] in
            let p = metric.paired
            return [
                UntrustedText.sanitized(metric.scorer), String(format: "%.3f", p.meanA),
                String(format: "%.3f", p.meanB),
                String(format: "%+.3f", p.difference.estimate),
                p.differenceIntervalUndefined != nil
                    ? "—" : String(format: "[%+.3f, %+.3f]", p.difference.lower, p.difference.upper),
                String(format: "%.4f", p.mcnemar?.pValue ?? p.pValue) + (p.mcnemar != nil ? " McN" : " t"),
                String(format: "%.4f", metric.adjustedPValue) + (metric.significant ? " *" : ""),
                "\(p.wins)/\(p.ties)/\(p.losses)",
                p.minimumDetectableEffect.isNaN ? "—" : String(format: "%.3f", p.minimumDetectableEffect), String(p.n),
            ]
        }
        let columns = [
            TableColumn("scorer", width: .fill(1)),
            TableColumn("A·" + runA, width: .length(max(6, runA.count + 2)), alignment: .trailing),
            TableColumn("B·" + runB, width: .length(max(6, runB.count + 2)), alignment: .trailing),
            TableColumn("B−A", width: .length(7), alignment: .trailing), TableColumn("95% CI", width: .length(17)),
            TableColumn("p", width: .length(10)), TableColumn("p (BH)", width: .length(8)),
            TableColumn("W/T/L", width: .length(11)), TableColumn("MDE", width: .length(6), alignment: .trailing),
            TableColumn("n", width: .length(4), alignment: .trailing),
        ]
        let listedMetric = comparison.metrics.metrics.firstIndex { $0.scorer == (compareScorer ?? comparison.headline) }
        // A table to read, not to walk: no selection. On a narrow screen n, the raw p and W/T/L
        // give way before the scorer's name does (at 80 columns it had no room left at all).
        let shown = TableColumn.fitting(columns, in: area.width - 1, dropping: [9, 5, 7], fillMinimum: 10)
        let tableHeight = min(metrics.count + 1, max(2, area.maxY - y - 4))
        let rects = TableView(columns: shown.map { columns[$0] }, rows: metrics.map { row in shown.map { row[$0] } })
            .columnRects(in: Rect(x: area.x + 1, y: y, width: area.width - 1, height: tableHeight))
        for (line, cells) in ([columns.map(\.title)] + metrics).prefix(tableHeight).enumerated() {
            for (position, index) in shown.enumerated() {
                let column = columns[index]
                let significant = line > 0 && index == 6 && cells[index].hasSuffix("*")
                // The scorer the lists below follow is marked.
                let listed = line > 0 && index == 0 && line - 1 == listedMetric
                frame.draw(
                    TextWidth.fit(
                        (listed ? "▸ " : line > 0 && index == 0 ? "  " : "") + cells[index],
                        toColumns: rects[position].width,
                        alignment: column.alignment),
                    at: Point(x: rects[position].x, y: y + line),
                    style: line == 0 ? theme.title : significant ? theme.accent : listed ? theme.key : theme.text,
                    clip: area)
            }
        }
        y += tableHeight
        // The interval and the test named: for pass/fail scorers both come from Tango's score
        // statistic, so the CI excludes 0 exactly when p < 0.05.
        frame.draw(
            Self.comparisonMethods(comparison.metrics), at: Point(x: area.x + 1, y: y), style: theme.dim, clip: area)
        y += 1
        // An interval and MDE shown as "—" say why, once (two identical runs: no spread to
        // estimate a variance from, nor to power a test with).
        if let why = comparison.metrics.metrics.lazy.compactMap(\.paired.minimumDetectableEffectUndefined).first {
            let what =
                comparison.metrics.metrics.contains { $0.paired.differenceIntervalUndefined != nil }
                ? "CI and MDE" : "MDE"
            frame.draw(what + " —: " + why, at: Point(x: area.x + 1, y: y), style: theme.dim, clip: area)
            y += 1
        }
        let changed = changedItems
        let fixed = changed.filter { $0.delta > 0 }.count
        let listed = compareScorer ?? comparison.headline
        frame.draw(
            [
                Span(UntrustedText.sanitized(listed) + ": ", theme.text), Span("\(fixed) fixed", theme.status(.ok)),
                Span(", ", theme.dim), Span("\(changed.count - fixed) regressed", theme.status(.error)),
                Span("  (enter opens the answer in run \(comparison.b.id)", theme.dim),
                Span(comparison.metrics.metrics.count > 1 ? "; s lists another scorer)" : ")", theme.dim),
            ], at: Point(x: area.x + 1, y: y), clip: area)
        y += 1
        guard y < area.maxY else { return }
        let rows = changed.map { item -> [String] in
            [
                item.delta > 0 ? "fixed" : "regressed", UntrustedText.sanitized(item.itemID),
                String(format: "%.3f → %.3f", item.a, item.b), String(format: "%+.3f", item.delta),
                UntrustedText.sanitized(item.input.replacingOccurrences(of: "\n", with: " ")),
            ]
        }
        var state = compareList
        TableView(
            columns: [
                TableColumn("", width: .length(9)), TableColumn("item", width: .length(12)),
                TableColumn("\(runA) → \(runB)", width: .length(max(14, runA.count + runB.count + 3))),
                TableColumn("Δ", width: .length(7), alignment: .trailing),
                TableColumn("input", width: .fill(1)),
            ], rows: rows, focused: focused
        ).render(
            into: &frame, area: Rect(x: area.x, y: y, width: area.width, height: area.maxY - y), state: &state,
            theme: theme)
    }

    /// A compared run as its column legend names it: its label, then its suite (and log).
    static func comparedName(_ listing: EvalService.RunListing) -> String {
        (listing.label.map { "“\($0)” · " } ?? "") + runName(listing.run)
    }

    /// The line under a comparison that names its intervals and tests, those of the metrics shown.
    package static func comparisonMethods(_ metrics: RunComparison) -> String {
        let tango = metrics.metrics.filter { $0.paired.difference.method == "tango-score" }
        var parts: [String] = []
        if !tango.isEmpty { parts.append("pass/fail: Tango score CI, asymptotic McNemar p") }
        if tango.count < metrics.metrics.count { parts.append("scores: t CI, paired t p") }
        return parts.joined(separator: " · ")
    }

    /// The name a run is listed by: its suite, and for an imported Inspect log the log's file name
    /// (several logs of one task otherwise read the same).
    package static func runName(_ run: EvalRunRecord) -> String {
        guard run.source == "inspect", let log = run.suiteFile else { return run.suite }
        return run.suite + " · " + (log as NSString).lastPathComponent
    }

    /// `±0.031` for an interval even about its estimate, `[0.116, 1.000]` for one that is not
    /// (a Wilson interval near 0 or 1, a bootstrap): a ± would misstate it.
    package static func intervalText(_ interval: Interval) -> String {
        let below = interval.estimate - interval.lower
        let above = interval.upper - interval.estimate
        guard below.isFinite, above.isFinite else { return "" }
        if abs(below - above) <= max(0.0005, 0.05 * max(below, above)) {
            return String(format: "±%.3f", interval.halfWidth)
        }
        return String(format: "[%.3f, %.3f]", interval.lower, interval.upper)
    }
}
