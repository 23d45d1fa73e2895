import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeRetrieval
import LoupeStore

extension ReviewService {
    /// What a pairwise queue judges: which of two answers to the same input is better (A on the
    /// left, B on the right, in an order drawn per item and recorded), and why.
    package static let pairwiseRubric = Rubric(
        name: "pairwise", version: 1, description: "Which answer is better?", targets: [.answer],
        criteria: [
            Rubric.Criterion(
                name: "preference", description: "A (left) is better, B (right) is better, or a tie",
                kind: .categorical([
                    Rubric.Option(name: "A", key: "a", passes: false),
                    Rubric.Option(name: "B", key: "b", passes: false),
                    Rubric.Option(name: "tie", key: "=", passes: false),
                ])),
            Rubric.Criterion(name: "reason", description: "Why", kind: .text),
        ])

    /// Two answers to one item, as an annotator sees them.
    package struct Pair: Hashable, Sendable {
        /// Shown on the left (A) and on the right (B).
        package var left: EvalService.ResultRow
        package var right: EvalService.ResultRow
        /// The runs the answers belong to; for a trace and its fork, the traces.
        package var leftRun: Int64
        package var rightRun: Int64
        /// Whether the left answer is the `--versus` run's (the order drawn for this item), or the fork's.
        package var swapped: Bool
        /// What each side is, revealed once the annotator has judged: "run 1 (agent-offline)",
        /// "trace 17 (original)", "trace 20 (fork at span 4)".
        package var leftName: String
        package var rightName: String
    }

    package static func pairKey(runs: (Int64, Int64), item: String, epoch: Int) -> String {
        "pair:\(runs.0)/\(runs.1)/\(item)/\(epoch)"
    }

    /// A pairwise queue: the source's answers, each beside the same item and epoch in `versus`,
    /// sides drawn with the seed.
    func createPairQueue(_ request: QueueRequest, source: ReviewSource, versus: Int64) throws -> Queue {
        guard source.kind == .answers, let run = source.run else {
            throw ReviewError("a pairwise queue sets answers beside answers: --from \"answers run:N …\" --versus RUN")
        }
        guard request.rubricPath == nil else {
            throw ReviewError("a pairwise queue judges A, B or tie with a reason: leave out --rubric")
        }
        guard run != versus else { throw ReviewError("--versus \(versus) is the run the answers come from") }
        guard try evals.evalRun(versus) != nil else { throw ReviewError("no eval run \(versus) (loupe eval list)") }
        let others = Dictionary(
            try evals.evalResults(run: versus).map { ($0.itemKey, $0) }, uniquingKeysWith: { a, _ in a })
        var generator = SplitMix64(seed: request.seed)
        let selected = try draw(source)
        guard !selected.isEmpty else { throw ReviewError("--from \"\(request.source)\" selects nothing") }
        let drawn = selected.compactMap { item -> ReviewItemRecord? in
            guard let id = item.evalItemID, let epoch = item.epoch,
                others[EvalItemKey(itemID: id, epoch: epoch)] != nil
            else { return nil }
            return ReviewItemRecord(
                queueID: 0, position: 0, itemKey: Self.pairKey(runs: (run, versus), item: id, epoch: epoch),
                runID: run, evalItemID: id, epoch: epoch, refJSON: "")
        }
        guard !drawn.isEmpty else {
            throw ReviewError("run \(versus) answered none of the items --from \"\(request.source)\" selects")
        }
        var items = Self.ordered(drawn, request, using: &generator)
        for index in items.indices {
            let swapped = generator.next() >> 63 == 1
            items[index].refJSON =
                JSONValue.object([
                    "kind": "pair", "item": .string(items[index].evalItemID!),
                    "epoch": .number(Double(items[index].epoch!)),
                    "runs": .array([.number(Double(run)), .number(Double(versus))]), "swapped": .bool(swapped),
                ]).compactJSON
        }
        return try storePairQueue(
            request, items: items, target: .answer, source: request.source + " versus run:\(versus)")
    }

    /// Stores a pairwise queue (the built-in A/B/tie rubric) with its items and assignments.
    private func storePairQueue(
        _ request: QueueRequest, items: [ReviewItemRecord], target: Rubric.Target, source: String
    ) throws -> Queue {
        let rubric = Self.pairwiseRubric
        let json = String(decoding: try JSONEncoder.sorted.encode(rubric), as: UTF8.self)
        let record = ReviewQueueRecord(
            name: request.name, rubricName: rubric.name, rubricVersion: rubric.version,
            rubricHash: String(SHA256.hex(Array(json.utf8)).prefix(12)), rubricJSON: json, rubricFile: nil,
            target: target.rawValue, mode: "pairwise", source: source, seed: Int64(bitPattern: request.seed),
            createdBy: request.createdBy)
        let id = try reviews.createReviewQueue(record, items: items, assignments: Self.assignments(items, request))
        var stored = record
        stored.id = id
        return Queue(record: stored, rubric: rubric)
    }

    /// The two answers of a pairwise item, in the order shown; nil for other items.
    func pair(_ record: ReviewItemRecord, ref: JSONValue?) throws -> Pair? {
        if record.itemKey.hasPrefix("fork:") { return try forkPair(ref: ref) }
        guard record.itemKey.hasPrefix("pair:"), let ref,
            let runs = ref["runs"]?.array?.compactMap(\.number).map({ Int64($0) }), runs.count == 2,
            let item = ref["item"]?.string, let epoch = ref["epoch"]?.number
        else { return nil }
        let swapped = ref["swapped"]?.bool ?? false
        func row(_ run: Int64) throws -> EvalService.ResultRow? {
            guard
                let result = try evals.evalResults(run: run).first(where: {
                    $0.itemID == item && $0.epoch == Int(epoch)
                })
            else { return nil }
            let scores = try evals.evalScores(run: run).filter { $0.itemID == item && $0.epoch == Int(epoch) }
            return EvalService.ResultRow(result: result, scores: scores)
        }
        let (leftRun, rightRun) = swapped ? (runs[1], runs[0]) : (runs[0], runs[1])
        guard let left = try row(leftRun), let right = try row(rightRun) else { return nil }
        func name(_ run: Int64) throws -> String {
            "run \(run)" + ((try evals.evalRun(run)?.suite).map { " (\($0))" } ?? "")
        }
        return Pair(
            left: left, right: right, leftRun: leftRun, rightRun: rightRun, swapped: swapped,
            leftName: try name(leftRun), rightName: try name(rightRun))
    }

    /// Head-to-head results of the systems (runs) in pairwise queues: each annotator's verdict is
    /// a game, read back through the side it was shown on.
    package struct PairwiseReport: Sendable {
        /// "run N (suite)" for each run met, in order of first appearance.
        package var systems: [String]
        package var games: Int
        package var winRates: [WinRate]
        /// With three or more systems.
        package var bradleyTerry: BradleyTerry?
        /// Verdicts left out: items whose answers are gone.
        package var unreadable: Int
        /// Verdicts left out because their item's stored reference does not read back, each
        /// naming its queue, item and column.
        package var damaged: [StoredValueError] = []
    }

    package func pairwise(queues names: [String]) throws -> PairwiseReport {
        var systems: [String] = []
        var runNames: [Int64: String] = [:]
        func system(_ run: Int64) throws -> String {
            if let name = runNames[run] { return name }
            let suite = try evals.evalRun(run)?.suite ?? "?"
            let name = "run \(run) (\(suite))"
            runNames[run] = name
            systems.append(name)
            return name
        }
        var outcomes: [(a: String, b: String, score: Double)] = []
        var unreadable = 0
        var damaged: [StoredValueError] = []
        for name in names {
            let queue = try self.queue(name)
            guard queue.record.mode == "pairwise" else { throw ReviewError("queue \(queue.name) is not pairwise") }
            let items = Dictionary(
                try reviews.reviewItems(queue: queue.id).map { ($0.itemKey, $0) }, uniquingKeysWith: { a, _ in a })
            for label in try reviews.reviewLabels(queue: queue.id) where label.criterion == "preference" {
                guard let record = items[label.itemKey] else {
                    unreadable += 1
                    continue
                }
                let ref: JSONValue
                do { ref = try Self.reference(of: record, queue: queue.name) } catch {
                    damaged.append(error)
                    continue
                }
                guard let runs = (ref["runs"] ?? ref["traces"])?.array?.compactMap(\.number).map({ Int64($0) }),
                    runs.count == 2
                else {
                    unreadable += 1
                    continue
                }
                let swapped = ref["swapped"]?.bool ?? false
                let score: Double =
                    switch label.value {
                    case "A": 1
                    case "B": 0
                    default: 0.5
                    }
                if ref["kind"]?.string == "forkpair" {
                    // Every fork against the trace it came from: two systems, whatever the traces.
                    for name in ["originals", "forks"] where !systems.contains(name) { systems.append(name) }
                    outcomes.append(swapped ? ("forks", "originals", score) : ("originals", "forks", score))
                    continue
                }
                let (left, right) = swapped ? (runs[1], runs[0]) : (runs[0], runs[1])
                outcomes.append((try system(left), try system(right), score))
            }
        }
        guard systems.count >= 2 else {
            return PairwiseReport(
                systems: systems, games: outcomes.count, winRates: [], bradleyTerry: nil, unreadable: unreadable,
                damaged: damaged)
        }
        return PairwiseReport(
            systems: systems, games: outcomes.count, winRates: WinRate.table(systems: systems, outcomes: outcomes),
            bradleyTerry: systems.count >= 3 ? BradleyTerry(systems: systems, outcomes: outcomes) : nil,
            unreadable: unreadable, damaged: damaged)
    }

    /// A pairwise queue of forks: each fork (a trace made by `trace fork`) that the source's traces
    /// hold, beside the trace it was forked from, sides drawn with the seed.
    func createForkQueue(_ request: QueueRequest, source: ReviewSource) throws -> Queue {
        guard source.kind == .traces else {
            throw ReviewError("--forks sets traces beside their forks: --from \"traces [FILTER]\" --forks")
        }
        guard request.rubricPath == nil else {
            throw ReviewError("a pairwise queue judges A, B or tie with a reason: leave out --rubric")
        }
        let summaries = Dictionary(
            try traces.traceSummaries().map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let drawn = try draw(source).compactMap { item -> ReviewItemRecord? in
            guard let fork = item.traceID, let parent = summaries[fork]?.parentTraceID, summaries[parent] != nil
            else { return nil }
            return ReviewItemRecord(
                queueID: 0, position: 0, itemKey: "fork:\(parent)/\(fork)", traceID: fork, refJSON: "")
        }
        guard !drawn.isEmpty else {
            throw ReviewError("--from \"\(request.source)\" holds no fork (trace fork makes one)")
        }
        var generator = SplitMix64(seed: request.seed)
        var items = Self.ordered(drawn, request, using: &generator)
        for index in items.indices {
            let fork = items[index].traceID!
            let parent = summaries[fork]!.parentTraceID!
            items[index].refJSON =
                JSONValue.object([
                    "kind": "forkpair", "traces": .array([.number(Double(parent)), .number(Double(fork))]),
                    "swapped": .bool(generator.next() >> 63 == 1),
                ]).compactJSON
        }
        return try storePairQueue(request, items: items, target: .trace, source: request.source + " forks")
    }

    /// A trace and its fork as two answers: the first user message, the final answer, the time.
    func forkPair(ref: JSONValue?) throws -> Pair? {
        guard let ref = Self.reference(ref, kind: "forkpair"),
            let ids = ref["traces"]?.array?.compactMap(\.number).map({ Int64($0) }), ids.count == 2
        else { return nil }
        let swapped = ref["swapped"]?.bool ?? false
        let service = TraceService(tables: traces)
        func row(_ id: Int64) throws -> EvalService.ResultRow? {
            guard let summary = try traces.traceSummary(id: id) else { return nil }
            let trace = try service.trace(id)
            let spans = trace.spans.sorted { $0.startNs < $1.startNs }
            let input = spans.flatMap(\.input).first { $0.role == "user" }?.text ?? trace.name
            let errors = spans.filter(\.status.isError).count
            return EvalService.ResultRow(
                result: EvalResultRecord(
                    runID: id, itemID: "trace \(id)", epoch: 1, input: input, targetsJSON: "[]",
                    output: EvalService.finalAnswer(spans) ?? "",
                    error: errors > 0 ? "\(errors) step\(errors == 1 ? "" : "s") failed" : nil,
                    latencyMs: Double(summary.durationNs) / 1e6, traceID: id),
                scores: [])
        }
        let (leftID, rightID) = swapped ? (ids[1], ids[0]) : (ids[0], ids[1])
        guard let left = try row(leftID), let right = try row(rightID) else { return nil }
        func name(_ id: Int64) throws -> String {
            guard id == ids[1] else { return "trace \(id) (original)" }
            let ordinal = try traces.traceSummary(id: id)?.forkOrdinal
            return "trace \(id) (fork" + (ordinal.map { " at span \($0)" } ?? "") + ")"
        }
        return Pair(
            left: left, right: right, leftRun: leftID, rightRun: rightID, swapped: swapped, leftName: try name(leftID),
            rightName: try name(rightID))
    }
}
