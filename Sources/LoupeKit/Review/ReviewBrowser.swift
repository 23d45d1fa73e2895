import Foundation
import LoupeBase
import LoupeEvals
import LoupeStore

/// The Review panel's port: the queues with their progress, an annotator's items with their
/// context, labels made, skipped and undone (each its own transaction, origin `review`), and a
/// run's scorer calibrated against a queue's labels.
///
/// The annotator is `LOUPE_USER`, else the login name (``ReviewService/annotator(_:environment:)``),
/// read from the environment the browser was made with.
///
/// Thread-safety: any thread; two annotators (or two processes) labelling at once both keep theirs.
package struct ReviewBrowser: Sendable {
    private let service: ReviewService
    private let environment: [String: String]

    /// What labels made from the TUI record as their origin.
    package static let origin = "review"
    /// Trace steps shown beside an item, at most.
    package static let stepLimit = 60

    package init(workspace: Workspace, environment: [String: String] = ProcessInfo.processInfo.environment) {
        service = ReviewService(workspace: workspace)
        self.environment = environment
    }

    /// A browser of a PostgreSQL workspace's queues (`database`).
    package init(database: any SQLDatabase, environment: [String: String] = ProcessInfo.processInfo.environment) {
        service = ReviewService(database: database)
        self.environment = environment
    }

    /// A queue as the queue list shows it.
    package struct Listing: Hashable, Sendable {
        package var queue: ReviewService.Queue
        package var progress: ReviewService.Progress
        /// The items the annotator may label (assigned to them or to nobody); nil when no
        /// annotator is known.
        package var yourItems: Int?
        /// How many of ``yourItems`` the annotator finished.
        package var yourFinished: Int
        /// A pairwise queue's verdicts as games between its two runs; nil for other queues.
        package var headToHead: HeadToHead?

        package init(
            queue: ReviewService.Queue, progress: ReviewService.Progress, yourItems: Int? = nil, yourFinished: Int = 0,
            headToHead: HeadToHead? = nil
        ) {
            self.queue = queue
            self.progress = progress
            self.yourItems = yourItems
            self.yourFinished = yourFinished
            self.headToHead = headToHead
        }
    }

    /// A pairwise queue's runs head to head (``ReviewService/pairwise(queues:)`` on the one queue).
    package struct HeadToHead: Hashable, Sendable {
        /// Verdicts read back through their sides.
        package var games: Int
        /// Each run's rate over the other, (wins + ties / 2) / games with a 95% Wilson interval;
        /// empty before the first verdict.
        package var winRates: [WinRate]
        /// Verdicts left out because their answers are gone.
        package var unreadable: Int
        /// Verdicts left out because their item's stored reference does not read back.
        package var damaged: [StoredValueError]

        package init(games: Int, winRates: [WinRate], unreadable: Int = 0, damaged: [StoredValueError] = []) {
            self.games = games
            self.winRates = winRates
            self.unreadable = unreadable
            self.damaged = damaged
        }
    }

    /// The queues, oldest first, and who labels.
    package struct Overview: Hashable, Sendable {
        package var queues: [Listing]
        /// The annotator; nil when none is known, and then ``annotatorProblem`` says what to set.
        package var annotator: String?
        package var annotatorProblem: String?

        package init(queues: [Listing], annotator: String?, annotatorProblem: String? = nil) {
            self.queues = queues
            self.annotator = annotator
            self.annotatorProblem = annotatorProblem
        }
    }

    /// What an item view shows: the item, the annotator's place in the queue, the queue's progress.
    package struct Opened: Hashable, Sendable {
        package var queue: ReviewService.Queue
        package var annotator: String
        package var progress: ReviewService.Progress
        /// The annotator's items (assigned to them or to nobody) in queue order; every item when
        /// none is theirs (``isAssigned`` false), so someone not assigned can still read and label.
        package var keys: [String]
        package var isAssigned: Bool
        /// Those the annotator has finished (every required criterion labelled).
        package var finished: Set<String>
        /// Nil when the annotator has nothing left to label.
        package var item: ReviewService.Item?
        /// The steps of the item's trace, in replay order (at most ``ReviewBrowser/stepLimit``).
        package var steps: [SpanRow]
        /// Why the steps of the item's trace could not be read, when they could not: the item
        /// shows without them and says so, rather than as a trace with no steps.
        package var stepsProblem: String?
        /// What the request that answered with this changed.
        package var change: Change?
        /// A pair's two runs as `run N (suite)`, for the reveal once the annotator has judged it.
        package var runNames: [Int64: String] = [:]
        /// The queue's runs head to head, for a pairwise queue.
        package var headToHead: HeadToHead?

        /// The item's place among ``keys`` (0-based), nil when it is not one of them.
        package var index: Int? { item.flatMap { item in keys.firstIndex(of: item.key) } }
    }

    /// What a write did.
    package enum Change: Hashable, Sendable {
        case labelled([ReviewLabelRecord])
        case skipped(String)
        /// The label taken back, nil when there was none.
        case undone(ReviewLabelRecord?)
    }

    /// A calibration as the panel shows it: the report's lines and the disagreements to open.
    package struct Calibration: Hashable, Sendable {
        package var queue: String
        package var run: Int64
        package var scorer: String
        /// The run's scorers, in the suite's order (`s` cycles them).
        package var scorers: [String]
        package var criterion: String
        /// The run's answers people labelled on the criterion: none, and there is nothing to
        /// calibrate against yet (no disagreement is not agreement).
        package var labelled: Int
        /// ``ReviewService/JudgeCalibration/summaryLines()``.
        package var summary: [String]
        package var disagreements: [ReviewService.JudgeCalibration.Disagreement]
    }

    /// Who labels, or why nobody can.
    package func annotator() throws -> String { try ReviewService.annotator(nil, environment: environment) }

    package func overview() throws -> Overview {
        let annotator: String
        do { annotator = try self.annotator() } catch {
            let listings = try service.queues().map {
                Listing(queue: $0, progress: try service.progress($0), headToHead: try headToHead($0))
            }
            return Overview(queues: listings, annotator: nil, annotatorProblem: "\(error)")
        }
        let listings = try service.queues().map { queue in
            let (keys, finished) = try itemsOf(queue, annotator: annotator)
            return Listing(
                queue: queue, progress: try service.progress(queue), yourItems: keys.count,
                yourFinished: finished.count,
                headToHead: try headToHead(queue))
        }
        return Overview(queues: listings, annotator: annotator)
    }

    /// The annotator's next item after `key` (their first open one without it); nil item when done.
    /// Someone none of whose items is theirs walks the whole queue in order.
    package func next(queue name: String, after key: String? = nil) throws -> Opened {
        let queue = try service.queue(name)
        let annotator = try annotator()
        var item = try service.next(queue, annotator: annotator, after: key)
        if item == nil, try itemsOf(queue, annotator: annotator).keys.isEmpty {
            let all = try service.reviews.reviewItems(queue: queue.id)
            let start = key.flatMap { key in all.firstIndex { $0.itemKey == key } }.map { $0 + 1 } ?? 0
            if start < all.count { item = try service.item(queue, record: all[start]) }
        }
        return try opened(queue, annotator: annotator, item: item)
    }

    /// One item of the queue.
    package func open(queue name: String, key: String) throws -> Opened {
        let queue = try service.queue(name)
        return try opened(queue, annotator: try annotator(), item: try service.item(queue, key: key))
    }

    /// Labels `key` with `text` on `criterion` (an option's name or key, a number, true/false, a
    /// note) in one transaction, and reads the item again.
    package func label(queue name: String, key: String, criterion: String, text: String) throws -> Opened {
        let queue = try service.queue(name)
        let annotator = try annotator()
        let stored = try service.label(
            queue, key: key, annotator: annotator, values: [(criterion, text)], origin: Self.origin)
        var opened = try opened(queue, annotator: annotator, item: try service.item(queue, key: key))
        opened.change = .labelled(stored)
        return opened
    }

    /// Puts `key` at the end of the annotator's queue and opens their next item.
    package func skip(queue name: String, key: String) throws -> Opened {
        let queue = try service.queue(name)
        let annotator = try annotator()
        try service.skip(queue, key: key, annotator: annotator)
        var opened = try opened(queue, annotator: annotator, item: try service.next(queue, annotator: annotator))
        opened.change = .skipped(key)
        return opened
    }

    /// Takes back the annotator's last label in the queue and opens the item it was on (`key`
    /// when there was none).
    package func undo(queue name: String, at key: String?) throws -> Opened {
        let queue = try service.queue(name)
        let annotator = try annotator()
        let undone = try service.undo(queue, annotator: annotator)
        let shown = try (undone?.itemKey ?? key).map { try service.item(queue, key: $0) }
        var opened = try opened(queue, annotator: annotator, item: shown)
        opened.change = .undone(undone)
        return opened
    }

    /// `scorer` (default: the run's first) of the run whose answers the queue holds, against the
    /// queue's labels on the rubric's first pass/fail criterion.
    package func calibration(queue name: String, scorer: String?) throws -> Calibration {
        let queue = try service.queue(name)
        guard queue.record.mode != "pairwise" else {
            throw ReviewError(
                "queue \(queue.name) is pairwise: its verdicts compare two runs (loupe review compare), "
                    + "a judge is calibrated against a queue with a pass/fail rubric")
        }
        let runs = try service.reviews.reviewItems(queue: queue.id).compactMap(\.runID)
        let counts = Dictionary(runs.map { ($0, 1) }, uniquingKeysWith: +)
        guard let run = counts.max(by: { ($0.value, -$0.key) < ($1.value, -$1.key) })?.key else {
            throw ReviewError(
                "queue \(queue.name) holds \(queue.record.target)s, not a run's answers: calibration compares a "
                    + "run's scorer with people's labels on its answers")
        }
        let record = try service.evals.evalRun(run)
        // A run whose scorers do not read back is an error naming it, not a run with none.
        let scorers = try record.map { try EvalService.scorers($0) } ?? []
        let report = try service.calibrate(run: run, queue: queue.name, scorer: scorer, criterion: nil)
        return Calibration(
            queue: queue.name, run: run, scorer: report.scorer, scorers: scorers, criterion: report.criterion,
            labelled: report.labelled, summary: report.summaryLines(), disagreements: report.disagreements)
    }

    /// The annotator's items in queue order (assigned to them or to nobody) and those they finished.
    private func itemsOf(_ queue: ReviewService.Queue, annotator: String) throws -> (
        keys: [String], finished: Set<String>
    ) {
        let assignments = try service.reviews.reviewAssignments(queue: queue.id)
        let keys = try service.reviews.reviewItems(queue: queue.id).map(\.itemKey).filter { key in
            assignments[key].map { $0.contains(annotator) } ?? true
        }
        let labels = try service.reviews.reviewLabels(queue: queue.id)
        return (keys, service.finished(queue, labels: labels, annotator: annotator).intersection(keys))
    }

    private func opened(_ queue: ReviewService.Queue, annotator: String, item: ReviewService.Item?) throws -> Opened {
        var (keys, finished) = try itemsOf(queue, annotator: annotator)
        let isAssigned = !keys.isEmpty
        if !isAssigned {
            keys = try service.reviews.reviewItems(queue: queue.id).map(\.itemKey)
            let labels = try service.reviews.reviewLabels(queue: queue.id)
            finished = service.finished(queue, labels: labels, annotator: annotator)
        }
        var steps: [SpanRow] = []
        var stepsProblem: String?
        if let trace = item?.record.traceID ?? item?.answer?.result.traceID {
            do {
                let loaded = try TraceService(tables: service.traces).load(trace)
                let byOrdinal = Dictionary(loaded.spans.map { ($0.ordinal, $0) }, uniquingKeysWith: { a, _ in a })
                steps = loaded.steps.prefix(Self.stepLimit).compactMap { byOrdinal[$0] }
            } catch {
                // A trace deleted since the item was queued is said in place ("no longer in the
                // workspace"); one that is there and does not read is said here.
                if item?.trace != nil { stepsProblem = "the steps of trace \(trace) could not be read: \(error)" }
            }
        }
        var runNames: [Int64: String] = [:]
        if let pair = item?.pair {
            runNames[pair.leftRun] = pair.leftName
            runNames[pair.rightRun] = pair.rightName
        }
        return Opened(
            queue: queue, annotator: annotator, progress: try service.progress(queue), keys: keys,
            isAssigned: isAssigned, finished: finished, item: item, steps: steps, stepsProblem: stepsProblem,
            change: nil, runNames: runNames, headToHead: try headToHead(queue))
    }

    /// A pairwise queue's head to head; nil for other queues.
    private func headToHead(_ queue: ReviewService.Queue) throws -> HeadToHead? {
        guard queue.record.mode == "pairwise" else { return nil }
        let report = try service.pairwise(queues: [queue.name])
        return HeadToHead(
            games: report.games, winRates: report.winRates, unreadable: report.unreadable, damaged: report.damaged)
    }
}
