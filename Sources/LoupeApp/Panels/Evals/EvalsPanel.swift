import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeRetrieval
import LoupeStore
import LoupeTUI

/// Eval runs and the suites that can be run: each run's headline metric with its 95% interval,
/// a sparkline of that metric over the suite's runs, and the selected run's statistics. Enter
/// opens a run's answers (filter `f`, sort `s`), Enter again one answer with every scorer's
/// verdict, `t` jumps to its trace or ranking (ctrl+o comes back). `r` runs the selected
/// suite, `R` re-runs its failed answers, `b` marks a baseline and `c` compares with it, `e`
/// exports CSV and JSON.
package struct EvalsPanel: Panel {
    package let id = PanelID.evals
    package let title = "Evals"

    package enum View: Hashable, Sendable { case runs, answers, answer, compare }

    /// Which answers the table shows.
    package enum Filter: String, CaseIterable, Sendable { case all, failed, errors, passed }
    /// The order of the answers table.
    package enum Order: String, CaseIterable, Sendable { case item, worst, best, slowest }

    /// A row of the runs list: a run, or a suite file not run yet.
    package enum Row: Hashable, Sendable {
        case run(EvalService.RunListing)
        case suite(String)
    }

    package private(set) var overview: EvalsOverview?
    package var runsList = ListState()
    package private(set) var view = View.runs
    package private(set) var detail: EvalService.RunDetail?
    package private(set) var loadingRun: Int64?
    package var answersList = ListState()
    package private(set) var filter = Filter.all
    package private(set) var order = Order.item
    package private(set) var answerKey: String?
    package var answerOffset = 0
    package private(set) var baseline: Int64?
    package private(set) var comparison: EvalService.Comparison?
    package var compareList = ListState()
    package private(set) var error: String?
    /// The view an answer was opened from (answers or compare), for esc.
    private var answerFrom = View.answers
    /// An answer to open once its run has loaded (from the comparison's lists).
    private var pendingAnswer: String?
    private var runningTags: Set<Int> = []
    private var nextTag = 1
    private var progressSeen = 0

    package init() {}

    package var keymap: Keymap {
        Keymap(
            "Evals",
            [
                KeyBinding([.character("r")], .panel(.own(Action.run)), help: "Run the selected suite", footer: "run"),
                KeyBinding(
                    [.character("R")], .panel(.own(Action.rerun)),
                    help: "Re-run the failed and errored answers of the selected run", footer: "re-run failed"),
                KeyBinding(
                    [.character("x")], .panel(.own(Action.cancel)),
                    help: "Cancel the running eval (its answers are kept; r resumes it)"),
                KeyBinding(
                    [.character("b")], .panel(.own(Action.baseline)), help: "Mark the selected run as the baseline",
                    footer: "baseline"),
                KeyBinding(
                    [.character("c")], .panel(.own(Action.compare)), help: "Compare the selected run with the baseline",
                    footer: "compare"),
                KeyBinding(
                    [.character("e")], .panel(.own(Action.export)),
                    help: "Export the run as eval-run-N.csv and eval-run-N.json", footer: "export"),
                KeyBinding(
                    [.character("f")], .panel(.own(Action.filter)),
                    help: "Answers: show all, failed, errors or passed"),
                KeyBinding(
                    [.character("s")], .panel(.own(Action.sort)), help: "Answers: sort by item, worst, best, slowest"),
                KeyBinding(
                    [.character("t")], .panel(.own(Action.evidence)),
                    help: "Open the answer's trace (Traces) or ranking (Retrieval); ctrl+o comes back"),
                KeyBinding([.character("g")], .panel(.own(Action.reload)), help: "Reload the runs"),
            ])
    }

    package var initialEffects: [PanelEffect] { [.ask(LoadOverview())] }
    package var canGoBack: Bool { view != .runs }
    package var isSearchable: Bool { view == .runs || view == .answers }

    // MARK: - Rows

    /// Runs newest first, then suites never run.
    package var rows: [Row] {
        guard let overview else { return [] }
        let ran = Set(overview.runs.compactMap(\.run.suiteFile).map(Self.canonical))
        return overview.runs.reversed().map(Row.run)
            + overview.suites.filter { !ran.contains(Self.canonical($0)) }.map(Row.suite)
    }

    static func canonical(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    package var selectedRow: Row? {
        let rows = self.rows
        return runsList.selected < rows.count ? rows[runsList.selected] : nil
    }

    package var selectedRun: EvalService.RunListing? {
        if case .run(let listing) = selectedRow { return listing }
        return nil
    }

    /// The answers on show, filtered and ordered.
    package var answers: [EvalService.ResultRow] {
        guard let detail else { return [] }
        let headline = detail.listing.scorers.first ?? ""
        func value(_ row: EvalService.ResultRow) -> Double {
            guard let score = row.score(headline) else { return -1 }
            return score.passed.map { $0 ? 1 : 0 } ?? score.value
        }
        let filtered = detail.rows.filter { row in
            switch filter {
            case .all: true
            case .errors: row.result.error != nil
            case .failed: row.failed
            case .passed: !row.failed
            }
        }
        switch order {
        case .item: return filtered
        case .worst: return filtered.enumerated().sorted { (value($0.1), $0.0) < (value($1.1), $1.0) }.map(\.1)
        case .best: return filtered.enumerated().sorted { (-value($0.1), $0.0) < (-value($1.1), $1.0) }.map(\.1)
        case .slowest:
            return filtered.enumerated().sorted {
                (-($0.1.result.latencyMs ?? 0), $0.0) < (-($1.1.result.latencyMs ?? 0), $1.0)
            }.map(\.1)
        }
    }

    package var openAnswer: EvalService.ResultRow? {
        guard let answerKey else { return nil }
        return detail?.rows.first { $0.key == answerKey }
    }

    /// The comparison's changed items: fixed (largest gain first), then regressed (largest loss first).
    package var changedItems: [EvalService.ItemDelta] {
        guard let comparison else { return [] }
        return comparison.itemDeltas.filter { $0.delta > 0 }.reversed() + comparison.itemDeltas.filter { $0.delta < 0 }
    }

    // MARK: - Messages

    /// The evals port's answers; a run or comparison the user has moved away from is dropped.
    private mutating func receive(_ answer: PortAnswer) {
        if let (_, loaded) = answer.matching(LoadOverview.self) {
            switch loaded {
            case .loaded(let loaded):
                let selectedID = selectedRun?.id
                overview = loaded
                error = nil
                if let selectedID, let index = rows.firstIndex(where: { Self.id($0) == selectedID }) {
                    runsList.selected = index
                } else {
                    runsList.selected = min(runsList.selected, max(0, rows.count - 1))
                }
            case .failed(let message):
                overview = overview ?? EvalsOverview(runs: [], suites: [])
                error = message
            }
        } else if let (asked, load) = answer.matching(LoadRun.self), asked.id == loadingRun {
            loadingRun = nil
            switch load {
            case .loaded(let loaded):
                let reload = detail?.listing.id == asked.id
                detail = loaded
                if !reload { answersList = ListState() }
                if let pending = pendingAnswer {
                    pendingAnswer = nil
                    if let row = loaded.rows.first(where: { $0.result.itemID == pending }) {
                        openAnswer(row.key, from: .compare)
                    }
                }
            case .failed(let message): error = message
            }
        } else if let (asked, load) = answer.matching(CompareRuns.self), asked.baseline == baseline,
            asked.run == selectedRun?.id
        {
            switch load {
            case .loaded(let compared):
                comparison = compared
                compareList = ListState()
                view = .compare
            case .failed(let message): error = message
            }
        }
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .answered(let answer):
            receive(answer)
        case .jobFinished:
            // A command from the : line (an eval run, a trace import) may have added runs.
            return [.ask(LoadOverview())]
        case .jobProgress:
            // A run started here grows in the list while it runs.
            guard !runningTags.isEmpty else { return [] }
            progressSeen += 1
            if progressSeen % 10 == 0 { return [.ask(LoadOverview())] }
        default: break
        }
        return []
    }

    static func id(_ row: Row) -> Int64? {
        if case .run(let listing) = row { return listing.id }
        return nil
    }

    package mutating func commandFinished(tag: Int, outcome: CommandOutcome) {
        runningTags.remove(tag)
        error = outcome.error
        pendingEffects.append(.ask(LoadOverview()))
        if let open = detail?.listing.id, view != .runs {
            loadingRun = open
            pendingEffects.append(.ask(LoadRun(id: open)))
        }
    }

    private var pendingEffects: [PanelEffect] = []
    package mutating func takeEffects() -> [PanelEffect] {
        defer { pendingEffects = [] }
        return pendingEffects
    }

    package mutating func goBack() {
        switch view {
        case .answer: view = answerFrom
        case .answers, .compare: view = .runs
        case .runs: break
        }
    }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        switch view {
        case .runs:
            let texts = rows.map { row -> String in
                switch row {
                case .run(let listing): "\(listing.id) \(listing.run.suite) \(listing.run.status)"
                case .suite(let path): path
                }
            }
            guard
                let index = nextMatch(
                    in: texts, from: runsList.selected, query: query, forward: forward, includeCurrent: includeCurrent)
            else { return false }
            runsList.selected = index
            return true
        case .answers:
            // Item id, input, output, error and metadata ("kind":"calculator" finds those items).
            let texts = answers.map {
                "\($0.result.itemID) \($0.result.input) \($0.result.output ?? "") \($0.result.error ?? "") "
                    + $0.result.metadataJSON
            }
            guard
                let index = nextMatch(
                    in: texts, from: answersList.selected, query: query, forward: forward,
                    includeCurrent: includeCurrent)
            else { return false }
            answersList.selected = index
            return true
        default: return false
        }
    }

    private mutating func openAnswer(_ key: String, from origin: View) {
        answerKey = key
        answerOffset = 0
        answerFrom = origin
        view = .answer
    }

    // MARK: - Keys

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        switch (view, action) {
        case (_, PanelAction.own(Action.reload)): return [.ask(LoadOverview())]
        case (.runs, .down): runsList.move(by: 1, count: rows.count)
        case (.runs, .up): runsList.move(by: -1, count: rows.count)
        case (.runs, .top): runsList.jump(toEnd: false, count: rows.count)
        case (.runs, .bottom): runsList.jump(toEnd: true, count: rows.count)
        case (.runs, .open):
            guard let run = selectedRun else { return runSuite() }
            view = .answers
            filter = .all
            order = .item
            if detail?.listing.id != run.id || loadingRun != nil {
                detail = nil
                loadingRun = run.id
                return [.ask(LoadRun(id: run.id))]
            }
        case (_, PanelAction.own(Action.run)): return runSuite()
        case (_, PanelAction.own(Action.cancel)):
            guard !runningTags.isEmpty else { return [] }
            return [.app(.cancelJobs)]
        case (_, PanelAction.own(Action.rerun)):
            guard let run = selectedRun else { return [] }
            guard let file = run.run.suiteFile, run.run.source == "loupe" else {
                error = "run \(run.id) was imported (\(run.run.source)): it has no suite to re-run"
                return []
            }
            return start("eval run \(Self.quote(file)) --only-failed \(run.id)")
        case (_, PanelAction.own(Action.baseline)):
            guard let run = selectedRun else { return [] }
            baseline = baseline == run.id ? nil : run.id
        case (_, PanelAction.own(Action.compare)):
            guard let run = selectedRun else { return [] }
            guard let baseline, baseline != run.id else {
                error = "mark a baseline with b on another run first"
                return []
            }
            error = nil
            return [.ask(CompareRuns(baseline: baseline, run: run.id))]
        case (_, PanelAction.own(Action.export)):
            guard let id = view == .runs ? selectedRun?.id : detail?.listing.id else { return [] }
            return [
                .run("eval export \(id) --format csv -o eval-run-\(id).csv", tag: 0),
                .run("eval export \(id) --format json -o eval-run-\(id).json", tag: 0),
            ]
        case (.answers, .down): answersList.move(by: 1, count: answers.count)
        case (.answers, .up): answersList.move(by: -1, count: answers.count)
        case (.answers, .pageDown): answersList.move(by: max(1, area.height - 8), count: answers.count)
        case (.answers, .pageUp): answersList.move(by: -max(1, area.height - 8), count: answers.count)
        case (.answers, .top): answersList.jump(toEnd: false, count: answers.count)
        case (.answers, .bottom): answersList.jump(toEnd: true, count: answers.count)
        case (.answers, PanelAction.own(Action.filter)):
            filter = Filter.allCases[(Filter.allCases.firstIndex(of: filter)! + 1) % Filter.allCases.count]
            answersList = ListState()
        case (.answers, PanelAction.own(Action.sort)):
            order = Order.allCases[(Order.allCases.firstIndex(of: order)! + 1) % Order.allCases.count]
            answersList = ListState()
        case (.answers, .open):
            let shown = answers
            guard answersList.selected < shown.count else { return [] }
            openAnswer(shown[answersList.selected].key, from: .answers)
        case (.answers, PanelAction.own(Action.evidence)):
            let shown = answers
            guard answersList.selected < shown.count else { return [] }
            return evidence(shown[answersList.selected])
        case (.answer, PanelAction.own(Action.evidence)):
            guard let row = openAnswer else { return [] }
            return evidence(row)
        case (.answer, .down): answerOffset += 1
        case (.answer, .up): answerOffset = max(0, answerOffset - 1)
        case (.answer, .pageDown): answerOffset += max(1, area.height - 4)
        case (.answer, .pageUp): answerOffset = max(0, answerOffset - max(1, area.height - 4))
        case (.answer, .top): answerOffset = 0
        case (.compare, .down): compareList.move(by: 1, count: changedItems.count)
        case (.compare, .up): compareList.move(by: -1, count: changedItems.count)
        case (.compare, .top): compareList.jump(toEnd: false, count: changedItems.count)
        case (.compare, .bottom): compareList.jump(toEnd: true, count: changedItems.count)
        case (.compare, .open):
            let items = changedItems
            guard compareList.selected < items.count, let run = comparison?.b.id else { return [] }
            let item = items[compareList.selected].itemID
            if detail?.listing.id == run, let row = detail?.rows.first(where: { $0.result.itemID == item }) {
                openAnswer(row.key, from: .compare)
                return []
            }
            pendingAnswer = item
            loadingRun = run
            return [.ask(LoadRun(id: run))]
        default: break
        }
        return []
    }

    private mutating func runSuite() -> [PanelEffect] {
        let file: String?
        switch selectedRow {
        case .run(let listing):
            guard listing.run.source == "loupe" else {
                error = "run \(listing.id) was imported (\(listing.run.source)): there is no suite to run"
                return []
            }
            file = listing.run.suiteFile
        case .suite(let path): file = path
        case nil: file = overview?.suites.first
        }
        guard let file else {
            error = "no suite to run: put suite files in evals/ or run loupe eval run FILE"
            return []
        }
        return start("eval run \(Self.quote(file))")
    }

    private mutating func start(_ line: String) -> [PanelEffect] {
        let tag = nextTag
        nextTag += 1
        runningTags.insert(tag)
        error = nil
        return [.run(line, tag: tag), .ask(LoadOverview())]
    }

    static func quote(_ path: String) -> String {
        path.contains(where: { $0 == " " || $0 == "'" || $0 == "\"" })
            ? "\"" + path.replacingOccurrences(of: "\"", with: "\\\"") + "\"" : path
    }

    /// The jump to an answer's evidence: its trace, or its ranking re-run with the run's settings.
    private mutating func evidence(_ row: EvalService.ResultRow) -> [PanelEffect] {
        if let trace = row.result.traceID { return [.navigate(.trace(trace))] }
        if row.result.retrievalRecordID != nil, let options = detail?.listing.retrievalOptions {
            return [.navigate(.retrieval(RetrievalRequest(row.result.input, options: options)))]
        }
        error = "answer \(row.result.itemID) has no trace or ranking to open"
        return []
    }

    // MARK: - Rendering

    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let trailing: String
        switch view {
        case .runs: trailing = "\(overview?.runs.count ?? 0) runs" + (baseline.map { " · baseline #\($0)" } ?? "")
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
        let needed = (selectedRun?.scorers.count ?? 0) + 4
        let summaryHeight = min(needed, max(0, area.height / 2 - 1))
        let parts = area.split(.vertical, [.fill(1), .length(summaryHeight)])
        let formatter = DateFormatter()
        formatter.dateFormat = "MM-dd HH:mm"
        let bySuite = Dictionary(grouping: overview.runs, by: \.run.suite)
        let table = rows.map { row -> [String] in
            switch row {
            case .run(let listing):
                let run = listing.run
                let headline = listing.headline
                let trend = (bySuite[run.suite] ?? []).filter { $0.id <= listing.id }.compactMap {
                    $0.headline?.interval.estimate
                }
                return [
                    baseline == listing.id ? "b" : run.status == "running" ? "●" : "", String(listing.id),
                    UntrustedText.sanitized(run.suite), run.targetKind, run.status,
                    "\(listing.answered)/\(run.planned)", headline.map { UntrustedText.sanitized($0.scorer) } ?? "—",
                    headline.map { String(format: "%.3f", $0.interval.estimate) } ?? "—",
                    headline.map { String(format: "±%.3f", $0.interval.halfWidth) } ?? "",
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
            TableColumn("headline", width: .length(10)), TableColumn("mean", width: .length(6), alignment: .trailing),
            TableColumn("95% CI", width: .length(7)), TableColumn("trend", width: .length(10)),
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
        var provenance = "run \(listing.id) · \(run.status) · epochs \(run.epochs) · loupe \(run.loupeVersion)"
        if let git = run.gitRevision { provenance += " · git \(git)" }
        if !run.suiteHash.isEmpty {
            provenance += " · suite \(run.suiteHash.prefix(8)) · data \(run.datasetHash.prefix(8))"
        }
        if let parent = run.parentRunID { provenance += " · re-run of \(parent)" }
        let summary = listing.summary
        provenance += " · \(summary.items) items, \(summary.rows) answers, \(summary.errors) errors"
        lines.append([Span(UntrustedText.sanitized(provenance), theme.dim)])
        for name in listing.scorers {
            guard let s = summary.scorers.first(where: { $0.scorer == name }) else { continue }
            let i = s.interval
            var line = [
                Span(TextWidth.fit(UntrustedText.sanitized(name), toColumns: 14, alignment: .leading), theme.text),
                Span(String(format: " %.3f ", i.estimate), theme.accent),
                Span(String(format: "[%.3f, %.3f] %@ n %d", i.lower, i.upper, i.method, i.n), theme.text),
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
        lines.append([
            Span("enter", theme.key), Span(" answers  ", theme.dim), Span("r", theme.key), Span(" run  ", theme.dim),
            Span("R", theme.key), Span(" re-run failed  ", theme.dim), Span("b", theme.key),
            Span(" baseline  ", theme.dim), Span("c", theme.key), Span(" compare  ", theme.dim), Span("e", theme.key),
            Span(" export", theme.dim),
        ])
        for (index, line) in lines.prefix(box.height - 1).enumerated() {
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
            let said = row.result.error.map { "error: " + $0 } ?? row.result.output ?? ""
            cells.append(UntrustedText.sanitized(said.replacingOccurrences(of: "\n", with: " ")))
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
        text(result.output ?? "(none)", result.output == nil ? theme.dim : theme.text)
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
            if let details = score.detailsJSON.flatMap({ try? JSONValue.parse($0) }),
                let verdict = details["verdict"]?.string
            {
                lines.append([Span("    judge prompt:", theme.dim)])
                text("    " + (details["prompt"]?.string ?? ""), theme.dim)
                lines.append([Span("    raw verdict:", theme.dim)])
                text("    " + verdict, theme.text)
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

    private func renderAnswer(into frame: inout Frame, area: Rect, theme: Theme) {
        let view = TextView(lines: answerLines(theme: theme))
        _ = view.render(into: &frame, area: area.inset(dx: 1, dy: 0), offset: answerOffset, theme: theme)
    }

    private func renderComparison(into frame: inout Frame, area: Rect, theme: Theme, focused: Bool) {
        guard let comparison else { return }
        var y = area.y
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
                String(format: "[%+.3f, %+.3f]", p.difference.lower, p.difference.upper),
                String(format: "%.4f", p.mcnemar?.pValue ?? p.pValue) + (p.mcnemar != nil ? " McN" : " t"),
                String(format: "%.4f", metric.adjustedPValue) + (metric.significant ? " *" : ""),
                "\(p.wins)/\(p.ties)/\(p.losses)", String(format: "%.3f", p.minimumDetectableEffect), String(p.n),
            ]
        }
        let columns = [
            TableColumn("scorer", width: .fill(1)), TableColumn("A", width: .length(6), alignment: .trailing),
            TableColumn("B", width: .length(6), alignment: .trailing),
            TableColumn("B−A", width: .length(7), alignment: .trailing), TableColumn("95% CI", width: .length(17)),
            TableColumn("p", width: .length(10)), TableColumn("p (BH)", width: .length(8)),
            TableColumn("W/T/L", width: .length(11)), TableColumn("MDE", width: .length(6), alignment: .trailing),
            TableColumn("n", width: .length(4), alignment: .trailing),
        ]
        // A table to read, not to walk: no selection.
        let tableHeight = min(metrics.count + 1, max(2, area.maxY - y - 4))
        let rects = TableView(columns: columns, rows: metrics).columnRects(
            in: Rect(x: area.x + 1, y: y, width: area.width - 1, height: tableHeight))
        for (line, cells) in ([columns.map(\.title)] + metrics).prefix(tableHeight).enumerated() {
            for (index, column) in columns.enumerated() {
                let significant = line > 0 && index == 6 && cells[index].hasSuffix("*")
                frame.draw(
                    TextWidth.fit(cells[index], toColumns: rects[index].width, alignment: column.alignment),
                    at: Point(x: rects[index].x, y: y + line),
                    style: line == 0 ? theme.title : significant ? theme.accent : theme.text, clip: area)
            }
        }
        y += tableHeight + 1
        let changed = changedItems
        let fixed = changed.filter { $0.delta > 0 }.count
        let headline = comparison.metrics.metrics.first?.scorer ?? ""
        frame.draw(
            [
                Span("\(headline): ", theme.text), Span("\(fixed) fixed", theme.status(.ok)), Span(", ", theme.dim),
                Span("\(changed.count - fixed) regressed", theme.status(.error)),
                Span("  (enter opens the answer in run \(comparison.b.id))", theme.dim),
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
                TableColumn("A → B", width: .length(14)), TableColumn("Δ", width: .length(7), alignment: .trailing),
                TableColumn("input", width: .fill(1)),
            ], rows: rows, focused: focused
        ).render(
            into: &frame, area: Rect(x: area.x, y: y, width: area.width, height: area.maxY - y), state: &state,
            theme: theme)
    }
}
