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
    package private(set) var answerKey: EvalItemKey?
    package var answerOffset = 0
    package private(set) var baseline: Int64?
    package private(set) var comparison: EvalService.Comparison?
    /// The scorer whose fixed and regressed items the comparison lists (`s` cycles; nil is the
    /// headline scorer).
    package private(set) var compareScorer: String?
    /// The compared baseline's answers (A), for an item opened from the comparison.
    package private(set) var baselineDetail: EvalService.RunDetail?
    package var compareList = ListState()
    package private(set) var error: String?
    /// The view an answer was opened from (answers or compare), for esc.
    package private(set) var answerFrom = View.answers
    /// An answer to open once its run has loaded (from the comparison's lists).
    private var pendingAnswer: String?
    private var runningTags: Set<Int> = []
    private var nextTag = 1
    private var progressSeen = 0
    /// A read of the runs asked for because the workspace changed, and whether it changed again
    /// since: one read at a time however fast workers store answers.
    private var overviewInFlight = false
    private var overviewStale = false

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
                    [.character("d")], .panel(.own(Action.keep)),
                    help: "Keep the answer as a dataset item: edit its expected output on the : line, enter adds it",
                    footer: "dataset"),
                KeyBinding(
                    [.character("f")], .panel(.own(Action.filter)),
                    help: "Answers: show all, failed, errors or passed"),
                KeyBinding(
                    [.character("s")], .panel(.own(Action.sort)),
                    help: "Answers: sort by item, worst, best, slowest; compare: list the next scorer's changed items"),
                KeyBinding(
                    [.character("t")], .panel(.own(Action.evidence)),
                    help: "Open the answer's trace (Traces) or ranking (Retrieval); ctrl+o comes back"),
                KeyBinding([.control("r")], .panel(.own(Action.reload)), help: "Reload the runs"),
            ])
    }

    package var initialEffects: [PanelEffect] { [.ask(LoadOverview())] }
    package var isLoadingFirstView: Bool { overview == nil }

    /// The open answer as its view shows it, or the selected answer's output, or the run's line.
    package var selectionText: String? {
        switch view {
        case .answer: return answerLines(theme: .builtInDefault).map { $0.map(\.text).joined() }.joined(separator: "\n")
        case .answers:
            let shown = answers
            return answersList.selected < shown.count ? shown[answersList.selected].result.output : nil
        case .runs, .compare:
            guard let run = selectedRun else { return nil }
            return "run \(run.id) \(run.run.suite): "
                + (run.headline.map { String(format: "%@ %.3f", $0.scorer, $0.interval.estimate) } ?? "no score")
        }
    }
    package var canGoBack: Bool { view != .runs }
    package var isSearchable: Bool { view == .runs || view == .answers }

    // MARK: - Rows

    /// Runs newest first, then suites never run.
    package var rows: [Row] {
        guard let overview else { return [] }
        let recorded = overview.runs.compactMap(\.run.suiteFile)
        return overview.runs.reversed().map(Row.run)
            + overview.suites.filter { suite in !recorded.contains { Self.isSameSuite($0, suite) } }.map(Row.suite)
    }

    static func canonical(_ path: String) -> String { URL(fileURLWithPath: path).standardizedFileURL.path }

    /// True when a run that recorded its suite as `recorded` ran the file listed as `suite`: the
    /// same path once both are absolute, or, for a run started from another directory (a suite
    /// file is recorded as it was given, relative to where `eval run` ran), `recorded` without its
    /// leading `./` and `../` is the tail of `suite`'s absolute path.
    package static func isSameSuite(_ recorded: String, _ suite: String) -> Bool {
        let listed = canonical(suite)
        if canonical(recorded) == listed { return true }
        guard !recorded.hasPrefix("/") else { return false }
        // A bare file name says too little: two folders may each hold a `suite.yaml`.
        let parts = recorded.split(separator: "/").drop { $0 == "." || $0 == ".." }
        return parts.count >= 2 && listed.hasSuffix("/" + parts.joined(separator: "/"))
    }

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
        let deltas = comparison.itemDeltas(compareScorer)
        return deltas.filter { $0.delta > 0 }.reversed() + deltas.filter { $0.delta < 0 }
    }

    // MARK: - Messages

    /// The evals port's answers; a run or comparison the user has moved away from is dropped.
    private mutating func receive(_ answer: PortAnswer) {
        if let (_, loaded) = answer.matching(LoadOverview.self) {
            overviewInFlight = false
            switch loaded {
            case .loaded(let loaded):
                let selected = selectedRow
                overview = loaded
                error = nil
                // The selection stays on its run or suite as runs are added above it; a suite that
                // has just started running is followed to its new run.
                let rows = self.rows
                let index: Int? =
                    switch selected {
                    case .run(let listing): rows.firstIndex { Self.id($0) == listing.id }
                    case .suite(let path):
                        rows.firstIndex { $0 == .suite(path) }
                            ?? rows.firstIndex {
                                if case .run(let run) = $0, let file = run.run.suiteFile {
                                    return Self.isSameSuite(file, path)
                                }
                                return false
                            }
                    case nil: nil
                    }
                runsList.selected = index ?? min(runsList.selected, max(0, rows.count - 1))
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
                compareScorer = nil
                compareList = ListState()
                view = .compare
            case .failed(let message): error = message
            }
        } else if let (asked, load) = answer.matching(LoadBaselineRun.self), asked.id == comparison?.a.id {
            if case .loaded(let loaded) = load { baselineDetail = loaded }
        }
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .answered(let answer):
            receive(answer)
            // A change came while the runs were read: read them once more.
            if answer.matching(LoadOverview.self) != nil, overviewStale {
                overviewStale = false
                overviewInFlight = true
                return [.ask(LoadOverview())]
            }
        case .jobFinished:
            // A command from the : line (an eval run, a trace import) may have added runs.
            return [.ask(LoadOverview())]
        case .workspaceChanged:
            // Another process committed (a worker stored an answer, someone queued a run): read
            // the runs again, one read at a time, and the open run with them.
            if overviewInFlight {
                overviewStale = true
                return []
            }
            overviewInFlight = true
            var effects: [PanelEffect] = [.ask(LoadOverview())]
            if let open = detail?.listing.id, view != .runs, loadingRun == nil {
                loadingRun = open
                effects.append(.ask(LoadRun(id: open)))
            }
            return effects
        case .jobProgress:
            // A run started here grows in the list while it runs.
            guard !runningTags.isEmpty else { return [] }
            progressSeen += 1
            if progressSeen % 10 == 0 { return [.ask(LoadOverview())] }
        case .input, .tick, .terminate, .fileWritten, .edited, .readFinished, .navigate, .listening, .unreachable: break
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
            return runsList.selectNextMatch(
                in: texts, query: query, forward: forward, includeCurrent: includeCurrent)
        case .answers:
            // Item id, input, output, error and metadata ("kind":"calculator" finds those items).
            let texts = answers.map {
                "\($0.result.itemID) \($0.result.input) \($0.result.output ?? "") \($0.result.error ?? "") "
                    + $0.result.metadataJSON
            }
            return answersList.selectNextMatch(
                in: texts, query: query, forward: forward, includeCurrent: includeCurrent)
        case .answer, .compare: return false
        }
    }

    private mutating func openAnswer(_ key: EvalItemKey, from origin: View) {
        answerKey = key
        answerOffset = 0
        answerFrom = origin
        view = .answer
    }

    // MARK: - Keys

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        switch action {
        case .specific(let own): return perform(own.action(as: Action.self))
        case .open:
            switch view {
            case .runs: return openSelectedRun()
            case .answers:
                let shown = answers
                guard answersList.selected < shown.count else { return [] }
                openAnswer(shown[answersList.selected].key, from: .answers)
            case .answer: break
            case .compare: return openChangedItem()
            }
        case .left, .right: break
        case .down, .up, .pageDown, .pageUp, .top, .bottom:
            switch view {
            case .runs: runsList.navigate(action, count: rows.count)
            case .answers: answersList.navigate(action, count: answers.count, page: max(1, area.height - 8))
            case .answer: scrollAnswer(action, page: max(1, area.height - 4))
            case .compare: compareList.navigate(action, count: changedItems.count)
            }
        }
        return []
    }

    /// The runs list's enter: the selected run's answers.
    private mutating func openSelectedRun() -> [PanelEffect] {
        guard let run = selectedRun else {
            // Running costs time and perhaps money: only r starts a run.
            guard case .suite(let path) = selectedRow else { return [] }
            return [.status("\(URL(fileURLWithPath: path).lastPathComponent) has not been run: r runs it", .info)]
        }
        view = .answers
        filter = .all
        order = .item
        if detail?.listing.id != run.id || loadingRun != nil {
            detail = nil
            loadingRun = run.id
            return [.ask(LoadRun(id: run.id))]
        }
        return []
    }

    /// The comparison's enter: the changed item's answer in the compared run.
    private mutating func openChangedItem() -> [PanelEffect] {
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
    }

    /// Scrolls the open answer: a line, `page` lines, or back to the top (its end is not known
    /// here, so `G` does nothing).
    private mutating func scrollAnswer(_ action: PanelAction, page: Int) {
        switch action {
        case .down: answerOffset += 1
        case .up: answerOffset = max(0, answerOffset - 1)
        case .pageDown: answerOffset += page
        case .pageUp: answerOffset = max(0, answerOffset - page)
        case .top: answerOffset = 0
        case .bottom, .left, .right, .open, .specific: break
        }
    }

    private mutating func perform(_ action: Action) -> [PanelEffect] {
        switch action {
        case .reload: return [.ask(LoadOverview())]
        case .run: return runSuite()
        case .cancel:
            guard !runningTags.isEmpty else { return [] }
            return [.app(.cancelJobs)]
        case .rerun:
            guard let run = selectedRun else { return [] }
            guard let file = run.run.suiteFile, run.run.source == "loupe" else {
                error = "run \(run.id) was imported (\(run.run.source)): it has no suite to re-run"
                return []
            }
            return start("eval run \(Self.quote(file)) --only-failed \(run.id)")
        case .baseline:
            guard let run = selectedRun else { return [] }
            baseline = baseline == run.id ? nil : run.id
            return [
                .status(
                    baseline == nil
                        ? "run \(run.id) is no longer the baseline"
                        : "run \(run.id) is the baseline: c compares a run with it",
                    .ok)
            ]
        case .compare:
            guard let run = selectedRun else { return [] }
            guard let baseline else {
                error = "mark a baseline with b on another run first"
                return []
            }
            guard baseline != run.id else {
                // Not an error: the user is on the baseline itself.
                return [.status("run \(run.id) is the baseline: select another run and press c to compare it", .info)]
            }
            error = nil
            if baselineDetail?.listing.id != baseline { baselineDetail = nil }
            return [.ask(CompareRuns(baseline: baseline, run: run.id)), .ask(LoadBaselineRun(id: baseline))]
        case .export:
            guard let id = view == .runs ? selectedRun?.id : detail?.listing.id else { return [] }
            // One command for both files, so its message names both.
            return [.run("eval export \(id) -o eval-run-\(id).csv -o eval-run-\(id).json", tag: 0)]
        case .filter:
            switch view {
            case .runs: return [.status("f and s filter and sort a run's answers: enter opens them", .info)]
            case .answers:
                filter = Filter.allCases[(Filter.allCases.firstIndex(of: filter)! + 1) % Filter.allCases.count]
                answersList = ListState()
            case .answer, .compare: break
            }
        case .sort:
            switch view {
            case .runs: return [.status("f and s filter and sort a run's answers: enter opens them", .info)]
            case .compare:
                // The fixed/regressed lists follow the next scorer both runs have.
                guard let scorers = comparison?.metrics.metrics.map(\.scorer), !scorers.isEmpty else { return [] }
                let current = scorers.firstIndex(of: compareScorer ?? scorers[0]) ?? 0
                compareScorer = scorers[(current + 1) % scorers.count]
                compareList = ListState()
            case .answers:
                order = Order.allCases[(Order.allCases.firstIndex(of: order)! + 1) % Order.allCases.count]
                answersList = ListState()
            case .answer: break
            }
        case .evidence:
            switch view {
            case .answers:
                let shown = answers
                guard answersList.selected < shown.count else { return [] }
                return evidence(shown[answersList.selected])
            case .answer:
                guard let row = openAnswer else { return [] }
                return evidence(row)
            case .runs, .compare: break
            }
        case .keep:
            switch view {
            case .answers:
                let shown = answers
                guard answersList.selected < shown.count else { return [] }
                return keep(shown[answersList.selected])
            case .answer:
                guard let row = openAnswer else { return [] }
                return keep(row)
            case .runs, .compare:
                return [.status("d keeps an answer as a dataset item: enter opens a run's answers", .info)]
            }
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

    /// `path` as one word of a command line: double-quoted, with `"` and `\` escaped, when it needs it.
    package static func quote(_ path: String) -> String {
        path.isEmpty || path.contains(where: { $0 == " " || $0 == "'" || $0 == "\"" || $0 == "\\" })
            ? "\""
                + path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\"" : path
    }

    /// The `dataset add` line that keeps `row` as an item of `kept-SUITE.jsonl` (beside where the
    /// TUI runs, as exports are), its expected output the answer's first target to edit in place,
    /// and, for a suite run here, `kept-SUITE.yaml` made from that suite to re-run it.
    private func keep(_ row: EvalService.ResultRow) -> [PanelEffect] {
        guard let listing = detail?.listing else { return [] }
        let stem = String(
            listing.run.suite.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" }.prefix(40))
        let from = "answer:\(listing.id)/\(row.result.itemID)/\(row.result.epoch)"
        var line = "dataset add kept-\(stem).jsonl --from " + Self.quote(from)
        let expected = row.targets.first.map { $0.replacingOccurrences(of: "\n", with: " ") } ?? ""
        line += " --expected " + Self.quote(expected)
        if listing.run.source == "loupe", let suite = listing.run.suiteFile {
            line += " --suite kept-\(stem).yaml --like " + Self.quote(suite)
        }
        return [.editCommand(line)]
    }

    /// The jump to an answer's evidence: its trace, or its ranking re-run with the run's settings.
    private mutating func evidence(_ row: EvalService.ResultRow) -> [PanelEffect] {
        if let trace = row.result.traceID { return [.navigate(.trace(trace))] }
        if row.result.retrievalRecordID != nil, let listing = detail?.listing {
            do {
                if let options = try listing.retrievalOptions() {
                    return [.navigate(.retrieval(RetrievalRequest(row.result.input, options: options)))]
                }
            } catch {
                // The run's settings do not read back: say which, rather than a ranking re-run
                // with settings it was never made with.
                self.error = error.description
                return []
            }
        }
        error = "answer \(row.result.itemID) has no trace or ranking to open"
        return []
    }
}
