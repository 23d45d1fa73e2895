import Foundation
import LoupeBase
import LoupeEvals
import LoupeRetrieval
import LoupeStore

/// The human part of the eval loop: queues of items to label against a rubric, labels made and
/// undone, progress and agreement, labels exported and imported. Each label is its own
/// transaction, so a kill loses none, and two annotators at once in one workspace both keep theirs.
package struct ReviewService: Sendable {
    package let reviews: ReviewTables
    package let traces: TraceTables
    package let evals: EvalTables
    /// The saved retrieval queries a queue of hits draws from.
    package let corpus: CorpusTables

    package init(workspace: Workspace) {
        self.init(database: workspace)
    }

    /// The review loop on a workspace's tables: a SQLite ``Workspace`` or a PostgreSQL workspace.
    package init(database: any SQLDatabase) {
        reviews = ReviewTables(database)
        traces = TraceTables(database)
        evals = EvalTables(database)
        corpus = CorpusTables(database)
    }

    // MARK: Annotators

    /// The annotator's name: `--as`, else `LOUPE_USER`, else the name `review as NAME` kept for
    /// this person (``annotatorFile(environment:)``), else the login name. Never a secret: a
    /// name that looks like a key or token is refused.
    package static func annotator(_ given: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(ReviewError) -> String
    {
        let kept = annotatorFile(environment: environment).flatMap {
            try? String(contentsOfFile: $0, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let name = (given ?? environment["LOUPE_USER"] ?? kept ?? environment["USER"] ?? "").trimmingCharacters(
            in: .whitespaces)
        guard !name.isEmpty else {
            throw ReviewError("who is labelling? :review as NAME (kept for you), --as NAME, or set LOUPE_USER")
        }
        guard name.count <= 64, !name.contains(where: { $0.isNewline || $0 == "," }) else {
            throw ReviewError("an annotator's name is one line of at most 64 characters, without commas")
        }
        let knownSecrets = SecretRedactor(secrets: environment.filter { Self.secretLike($0.key) }.map(\.value))
        guard knownSecrets.redactCredentials(in: name) == name else {
            throw ReviewError("that annotator name looks like a secret (a key or token): use a person's name")
        }
        return name
    }

    /// Where `review as NAME` keeps the annotator's name: `$XDG_CONFIG_HOME/loupe/annotator`
    /// (`~/.config/loupe/annotator`). The person's, not the workspace's: a team's workspace has
    /// many annotators. Nil without a home to keep it in.
    package static func annotatorFile(environment: [String: String]) -> String? {
        let configHome =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["HOME"].flatMap { $0.isEmpty ? nil : $0 + "/.config" }
        return configHome.map { $0 + "/loupe/annotator" }
    }

    /// Keeps `name` as this person's annotator (checked as ``annotator(_:environment:)`` checks a
    /// given name) and returns where.
    package static func rememberAnnotator(_ name: String, environment: [String: String]) throws(ReviewError) -> String {
        let checked = try annotator(name, environment: environment)
        guard let path = annotatorFile(environment: environment) else {
            throw ReviewError("no HOME or XDG_CONFIG_HOME to keep the name in: set LOUPE_USER instead")
        }
        do {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data((checked + "\n").utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch { throw ReviewError("could not keep the name in \(path): \(error.localizedDescription)") }
        return path
    }

    /// Environment variables whose values are secrets (an annotator name equal to one is refused).
    static func secretLike(_ variable: String) -> Bool {
        let upper = variable.uppercased()
        return ["KEY", "TOKEN", "SECRET", "PASSWORD"].contains { upper.contains($0) }
    }

    // MARK: Queues

    package struct QueueRequest: Sendable {
        package var name: String
        /// The rubric file; nil for a pairwise queue, which judges with ``ReviewService/pairwiseRubric``.
        package var rubricPath: String?
        package var source: String
        /// Pairwise: the run whose answers are set beside the source's, item by item.
        package var versus: Int64?
        /// Pairwise: each fork among the source's traces beside the trace it was forked from.
        package var forks = false
        package var annotators: [String] = []
        /// How many annotators each item is assigned to (for human-human agreement).
        package var overlap = 1
        package var seed: UInt64 = 0x5EED
        package var limit: Int?
        package var createdBy: String

        package init(name: String, rubricPath: String?, source: String, createdBy: String) {
            self.name = name
            self.rubricPath = rubricPath
            self.source = source
            self.createdBy = createdBy
        }
    }

    package struct Queue: Hashable, Sendable {
        package var record: ReviewQueueRecord
        package var rubric: Rubric
        package var id: Int64 { record.id ?? 0 }
        package var name: String { record.name }
    }

    /// Reads a rubric file (errors at file:line:col) with the hash of its text.
    package static func loadRubric(_ path: String) throws -> (rubric: Rubric, hash: String) {
        let text: String
        do { text = try TextFile.read(path) } catch { throw ReviewError("\(error)") }
        let rubric = try RubricParser.parse(text, file: path)
        return (rubric, String(SHA256.hex(Array(text.utf8)).prefix(12)))
    }

    /// Creates a queue: the items `source` selects, shuffled with the seed, each assigned to
    /// `overlap` of the annotators in turn (to nobody, open to all, when none are named).
    @discardableResult
    package func createQueue(_ request: QueueRequest) throws -> Queue {
        guard !request.name.isEmpty, !request.name.contains(where: \.isWhitespace), Int64(request.name) == nil else {
            throw ReviewError("a queue's name is one word, not a number (numbers are queue ids)")
        }
        if try reviews.reviewQueue(request.name) != nil {
            throw ReviewError("there is already a queue named \(request.name) (loupe review queue list)")
        }
        let source = try ReviewSource(request.source)
        if let versus = request.versus { return try createPairQueue(request, source: source, versus: versus) }
        if request.forks { return try createForkQueue(request, source: source) }
        guard let rubricPath = request.rubricPath else {
            throw ReviewError("a queue needs a rubric (--rubric FILE), or --versus RUN for a pairwise one")
        }
        let (rubric, hash) = try Self.loadRubric(rubricPath)
        let target = source.kind.target
        guard rubric.targets.contains(target) else {
            throw ReviewError(
                "rubric \(rubric.name) applies to \(rubric.targets.map(\.rawValue).joined(separator: ", ")), "
                    + "not to \(target.rawValue)s: add \(target.rawValue) to its targets")
        }
        guard request.overlap >= 1, request.annotators.isEmpty || request.overlap <= request.annotators.count else {
            throw ReviewError("--overlap is between 1 and the number of annotators")
        }
        var items = try draw(source)
        guard !items.isEmpty else { throw ReviewError("--from \"\(request.source)\" selects nothing") }
        var generator = SplitMix64(seed: request.seed)
        items = Self.ordered(items, request, using: &generator)
        let assignments = Self.assignments(items, request)
        let record = ReviewQueueRecord(
            name: request.name, rubricName: rubric.name, rubricVersion: rubric.version, rubricHash: hash,
            rubricJSON: String(decoding: try JSONEncoder.sorted.encode(rubric), as: UTF8.self),
            rubricFile: rubricPath, target: target.rawValue, mode: "single", source: request.source,
            seed: Int64(bitPattern: request.seed), createdBy: request.createdBy)
        let id = try reviews.createReviewQueue(record, items: items, assignments: assignments)
        var stored = record
        stored.id = id
        return Queue(record: stored, rubric: rubric)
    }

    /// The items shuffled with the request's generator, cut to its limit, numbered from 1.
    static func ordered(
        _ items: [ReviewItemRecord], _ request: QueueRequest, using generator: inout SplitMix64
    ) -> [ReviewItemRecord] {
        var items = items
        items.shuffle(using: &generator)
        if let limit = request.limit { items = Array(items.prefix(limit)) }
        for index in items.indices { items[index].position = index + 1 }
        return items
    }

    /// Each item assigned to `overlap` of the annotators in turn (none when no one is named).
    static func assignments(_ items: [ReviewItemRecord], _ request: QueueRequest) -> [(
        itemKey: String, annotator: String
    )] {
        guard !request.annotators.isEmpty else { return [] }
        return items.enumerated().flatMap { index, item in
            (0..<request.overlap).map { turn in
                (item.itemKey, request.annotators[(index + turn) % request.annotators.count])
            }
        }
    }

    /// The items a source selects, in the order the workspace holds them (positions come later).
    func draw(_ source: ReviewSource) throws -> [ReviewItemRecord] {
        switch source.kind {
        case .steps: return try drawSteps(source)
        case .sessions: return try drawSessions(source)
        case .hits: return try drawHits(source)
        case .traces:
            let filter = source.traceFilter
            return try traces.traceSummaries().filter { filter?.matches($0) ?? true }.map { trace in
                ReviewItemRecord(
                    queueID: 0, position: 0, itemKey: "trace:\(trace.id)", traceID: trace.id,
                    refJSON: JSONValue.object(["kind": "trace", "trace": .number(Double(trace.id))]).compactJSON)
            }
        case .answers:
            let run = source.run!
            guard try evals.evalRun(run) != nil else { throw ReviewError("no eval run \(run) (loupe eval list)") }
            let rows = try EvalService(evals: evals).detail(run).rows
            return rows.filter { row in
                if source.failedOnly, !row.failed { return false }
                if source.passedOnly, row.failed { return false }
                if source.errorsOnly, row.result.error == nil { return false }
                if let item = source.item, row.result.itemID != item { return false }
                for bound in source.scoreBounds {
                    guard let score = row.score(bound.scorer),
                        ReviewSource.holds(score.value, bound.op, bound.value)
                    else { return false }
                }
                if !source.words.isEmpty {
                    let text = (row.result.input + " " + (row.result.output ?? "")).lowercased()
                    guard source.words.allSatisfy(text.contains) else { return false }
                }
                return true
            }.map { row in
                let result = row.result
                return ReviewItemRecord(
                    queueID: 0, position: 0,
                    itemKey: Self.answerKey(run: run, item: result.itemID, epoch: result.epoch),
                    runID: run, evalItemID: result.itemID, epoch: result.epoch, traceID: result.traceID,
                    refJSON: JSONValue.object([
                        "kind": "answer", "run": .number(Double(run)), "item": .string(result.itemID),
                        "epoch": .number(Double(result.epoch)),
                    ]).compactJSON)
            }
        }
    }

    package static func answerKey(run: Int64, item: String, epoch: Int) -> String { "run:\(run)/\(item)/\(epoch)" }

    package func queues() throws -> [Queue] {
        try reviews.reviewQueues().map(Self.queue)
    }

    package func queue(_ name: String) throws -> Queue {
        guard let record = try reviews.reviewQueue(name) else {
            throw ReviewError("no review queue \(name) (loupe review queue list)")
        }
        return try Self.queue(record)
    }

    static func queue(_ record: ReviewQueueRecord) throws -> Queue {
        let rubric: Rubric
        do { rubric = try JSONDecoder().decode(Rubric.self, from: Data(record.rubricJSON.utf8)) } catch {
            throw ReviewError("queue \(record.name): its stored rubric cannot be read (\(error))")
        }
        return Queue(record: record, rubric: rubric)
    }

    // MARK: Items

    /// An item with what an annotator needs to judge it.
    package struct Item: Hashable, Sendable {
        package var record: ReviewItemRecord
        package var key: String { record.itemKey }
        package var position: Int { record.position }
        /// answers: the answer with its scores.
        package var answer: EvalService.ResultRow?
        /// traces: the trace's summary.
        package var trace: TraceSummary?
        /// pairwise: the two answers as shown, A on the left.
        package var pair: Pair?
        /// steps: the span, in its trace.
        package var step: Step?
        /// sessions: the session's turns.
        package var session: TraceSession?
        /// hits: the query and the hit as it was ranked.
        package var hit: Hit?
        /// The labels every annotator has made on it.
        package var labels: [ReviewLabelRecord]
        /// Its stored columns that do not read back (its reference), each naming the queue, the
        /// item and the column: the item is shown without what they held, and says so.
        package var unreadable: [StoredValueError] = []
    }

    package func item(_ queue: Queue, key: String) throws -> Item {
        guard let record = try reviews.reviewItems(queue: queue.id).first(where: { $0.itemKey == key }) else {
            throw ReviewError("queue \(queue.name) has no item \(key)")
        }
        return try item(queue, record: record)
    }

    package func item(_ queue: Queue, record: ReviewItemRecord) throws -> Item {
        var answer: EvalService.ResultRow?
        if let run = record.runID, let itemID = record.evalItemID, let epoch = record.epoch,
            !record.itemKey.hasPrefix("pair:")
        {
            let results = try evals.evalResults(run: run)
            if let result = results.first(where: { $0.itemID == itemID && $0.epoch == epoch }) {
                let scores = try evals.evalScores(run: run).filter { $0.itemID == itemID && $0.epoch == epoch }
                answer = EvalService.ResultRow(result: result, scores: scores)
            }
        }
        let trace = try record.traceID.flatMap { try traces.traceSummary(id: $0) }
        let labels = try reviews.reviewLabels(queue: queue.id).filter { $0.itemKey == record.itemKey }
        var unreadable: [StoredValueError] = []
        let ref: JSONValue?
        do {
            ref = try Self.reference(of: record, queue: queue.name)
        } catch {
            unreadable.append(error)
            ref = nil
        }
        return Item(
            record: record, answer: answer, trace: trace, pair: try pair(record, ref: ref),
            step: try step(record, ref: ref), session: try session(ref: ref), hit: try hit(ref: ref), labels: labels,
            unreadable: unreadable + (answer?.unreadable ?? []))
    }

    /// The keys `annotator` has finished (every required criterion labelled).
    func finished(_ queue: Queue, labels: [ReviewLabelRecord], annotator: String) -> Set<String> {
        let required = Set(queue.rubric.criteria.filter(\.required).map(\.name))
        var byItem: [String: Set<String>] = [:]
        for label in labels where label.annotator == annotator {
            byItem[label.itemKey, default: []].insert(label.criterion)
        }
        return Set(byItem.filter { required.isSubset(of: $0.value) }.keys)
    }

    /// The next item for `annotator`: the first (in queue order) assigned to them or to nobody that
    /// they have not finished or skipped; then what they skipped, oldest skip first. Nil when done.
    package func next(_ queue: Queue, annotator: String, after key: String? = nil) throws -> Item? {
        let items = try reviews.reviewItems(queue: queue.id)
        let assignments = try reviews.reviewAssignments(queue: queue.id)
        let done = finished(queue, labels: try reviews.reviewLabels(queue: queue.id), annotator: annotator)
        let skipped = try reviews.reviewSkips(queue: queue.id, annotator: annotator)
        let skippedSet = Set(skipped)
        let mine = items.filter { item in
            assignments[item.itemKey].map { $0.contains(annotator) } ?? true
        }
        let open = mine.filter { !done.contains($0.itemKey) && !skippedSet.contains($0.itemKey) }
        let startAt = key.flatMap { key in mine.first { $0.itemKey == key }?.position } ?? 0
        if let record = open.first(where: { $0.position > startAt }) ?? open.first {
            return try item(queue, record: record)
        }
        for key in skipped where !done.contains(key) {
            if let record = mine.first(where: { $0.itemKey == key }) { return try item(queue, record: record) }
        }
        return nil
    }

    // MARK: Labels

    /// Stores `values` (criterion → text) on an item as `annotator`'s labels, in one transaction.
    /// Values are checked against the rubric first: a wrong one stores nothing.
    @discardableResult
    package func label(
        _ queue: Queue, key: String, annotator: String, values: [(criterion: String, text: String)],
        origin: String = "command", at date: Date = Date()
    ) throws -> [ReviewLabelRecord] {
        guard try reviews.reviewItems(queue: queue.id).contains(where: { $0.itemKey == key }) else {
            throw ReviewError("queue \(queue.name) has no item \(key)")
        }
        guard !values.isEmpty else { throw ReviewError("no labels given: write criterion=value") }
        let shown = queue.record.mode == "pairwise" ? try item(queue, key: key).pair : nil
        let labels = try values.map { given in
            var pair = (criterion: given.criterion, text: given.text)
            // A pairwise verdict may name the run it prefers (`preference=run:2`) instead of the side
            // that run was shown on: what a script knows.
            let prefix = key.hasPrefix("fork:") ? "trace:" : "run:"
            if let shown, pair.text.hasPrefix(prefix), let run = Int64(pair.text.dropFirst(prefix.count)) {
                guard run == shown.leftRun || run == shown.rightRun else {
                    throw ReviewError(
                        "\(key) sets \(shown.leftName) and \(shown.rightName) side by side, not \(pair.text)")
                }
                pair.text = run == shown.leftRun ? "A" : "B"
            }
            guard let criterion = queue.rubric.criterion(pair.criterion) else {
                throw ReviewError(
                    "rubric \(queue.rubric.name) has no criterion \(pair.criterion) (it has "
                        + queue.rubric.criteria.map(\.name).joined(separator: ", ") + ")")
            }
            let value: Rubric.Value
            switch criterion.value(pair.text) {
            case .success(let read): value = read
            case .failure(let error): throw ReviewError(error.description)
            }
            return ReviewLabelRecord(
                queueID: queue.id, itemKey: key, criterion: criterion.name, value: value.description,
                number: value.number, annotator: annotator, rubricVersion: queue.rubric.version,
                rubricHash: queue.record.rubricHash, origin: origin, createdAt: date)
        }
        try reviews.addReviewLabels(labels)
        return labels
    }

    package func skip(_ queue: Queue, key: String, annotator: String) throws {
        try reviews.skipReviewItem(queue: queue.id, itemKey: key, annotator: annotator)
    }

    package func undo(_ queue: Queue, annotator: String) throws -> ReviewLabelRecord? {
        try reviews.undoLastReviewLabel(queue: queue.id, annotator: annotator)
    }

    // MARK: Progress

    package struct Progress: Hashable, Sendable {
        package struct Annotator: Hashable, Sendable {
            package var name: String
            package var finished: Int
            /// Items assigned to them (all items for an open queue).
            package var assigned: Int
            package var skipped: Int
        }

        package var items: Int
        package var annotators: [Annotator]
        /// Items someone has finished.
        package var labelled: Int
        /// Items two or more annotators finished.
        package var shared: Int
        /// On the pass/fail criterion (a pairwise queue's preference), the share of shared items
        /// where the first two annotators agree (nil when no item is shared).
        package var agreement: Double?
        package var agreementCriterion: String?
    }

    package func progress(_ queue: Queue) throws -> Progress {
        let items = try reviews.reviewItems(queue: queue.id)
        let labels = try reviews.reviewLabels(queue: queue.id)
        let assignments = try reviews.reviewAssignments(queue: queue.id)
        var names = Set(assignments.values.flatMap { $0 })
        names.formUnion(labels.map(\.annotator))
        var finishedBy: [String: Set<String>] = [:]
        let annotators = try names.sorted().map { name in
            let done = finished(queue, labels: labels, annotator: name)
            finishedBy[name] = done
            let assigned = assignments.isEmpty ? items.count : assignments.values.filter { $0.contains(name) }.count
            let skipped = Set(try reviews.reviewSkips(queue: queue.id, annotator: name)).subtracting(done).count
            return Progress.Annotator(name: name, finished: done.count, assigned: assigned, skipped: skipped)
        }
        var finishers: [String: Int] = [:]
        for done in finishedBy.values { for key in done { finishers[key, default: 0] += 1 } }
        var agreement: Double?
        // People agree on pass or fail where the rubric says what passes, else on the verdict
        // itself (a pairwise queue's A, B or tie).
        let criterion =
            queue.rubric.passFailCriterion
            ?? queue.rubric.criteria.first { if case .categorical = $0.kind { true } else { false } }
        if let criterion {
            var verdicts: [String: [(String, String)]] = [:]
            for label in labels where label.criterion == criterion.name {
                guard case .success(let value) = criterion.value(label.value) else { continue }
                let verdict =
                    criterion.passFails ? (criterion.passes(value) == true ? "pass" : "fail") : value.description
                verdicts[label.itemKey, default: []].append((label.annotator, verdict))
            }
            let pairs = verdicts.values.compactMap { list -> Bool? in
                let sorted = list.sorted { $0.0 < $1.0 }
                return sorted.count >= 2 ? sorted[0].1 == sorted[1].1 : nil
            }
            if !pairs.isEmpty { agreement = Double(pairs.filter { $0 }.count) / Double(pairs.count) }
        }
        return Progress(
            items: items.count, annotators: annotators, labelled: finishers.count,
            shared: finishers.values.filter { $0 >= 2 }.count, agreement: agreement, agreementCriterion: criterion?.name
        )
    }
}

extension JSONEncoder {
    /// Keys sorted: the same value encodes to the same text (hashes, diffs).
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
