import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeStore

extension EvalService {
    /// A run as lists show it: its record, scorers and summary.
    package struct RunListing: Hashable, Sendable {
        package var run: EvalRunRecord
        package var scorers: [String]
        package var summary: RunSummary
        package var answered: Int
        /// Where a run queued for workers stands (nil for a run answered in one process).
        package var work: EvalWorkProgress?
        /// The workers that leased its items, busiest first.
        package var workers: [EvalWorkerActivity]
        /// The label people gave the run (`loupe eval label`), nil when none.
        package var label: String?
        /// The trend series the run joins (``EvalService/series(_:model:)``).
        package private(set) var series: String
        /// The corpus the run searched, as a line (``EvalService/workspaceLine(_:)``); nil when
        /// it searched none.
        package private(set) var searched: String?
        /// The run's stored columns that do not read back (an Inspect log's target, the
        /// workspace it searched), each naming the run and column; the rest reads as stored.
        package private(set) var unreadable: [StoredValueError] = []

        /// The listing with the run's JSON columns decoded once, here, rather than on each redraw.
        package init(
            run: EvalRunRecord, scorers: [String], summary: RunSummary, answered: Int, work: EvalWorkProgress? = nil,
            workers: [EvalWorkerActivity] = []
        ) {
            self.run = run
            self.scorers = scorers
            self.summary = summary
            self.answered = answered
            self.work = work
            self.workers = workers
            let row = "run \(run.id ?? 0)"
            var model: String?
            var unreadable: [StoredValueError] = []
            if run.source == "inspect" {
                do {
                    model = try JSONValue.parse(stored: run.targetJSON, "target", row: row, column: "target_json")
                        .object?["model"]?.string
                } catch {
                    unreadable.append(error)
                }
            }
            series = EvalService.series(run, model: model)
            if let json = run.workspaceJSON {
                do {
                    searched = EvalService.workspaceLine(
                        try JSONValue.parse(stored: json, "workspace", row: row, column: "workspace_json"))
                } catch {
                    unreadable.append(error)
                }
            }
            self.unreadable = unreadable
        }

        /// The workers in a line: `workers 3 · 12/16 answered · 2 in flight · b 7 (6.1/s) · a 3 · c 2 (1.9/s)`.
        package var workersLine: String? {
            guard let work else { return nil }
            var parts = [
                "workers \(workers.count)", "\(work.done)/\(work.total) answered", "\(work.inFlight) in flight",
            ]
            if work.waiting > 0 { parts.append("\(work.waiting) waiting") }
            for worker in workers {
                parts.append(
                    "\(worker.worker) \(worker.answered)"
                        + (worker.answersPerSecond.map { String(format: " (%.1f/s)", $0) } ?? ""))
            }
            return parts.joined(separator: " · ")
        }

        package var id: Int64 { run.id ?? 0 }
        /// The first scorer's aggregate.
        package var headline: ScorerSummary? {
            scorers.lazy.compactMap { name in self.summary.scorers.first { $0.scorer == name } }.first
        }
    }

    /// One answer with its scores, for the per-item table and the drill-down.
    /// The result metadata key that holds why the target stopped short (Loupe's own, so an
    /// item's metadata cannot pose as one).
    package static let stopReasonKey = "loupe_stop_reason"

    package struct ResultRow: Hashable, Sendable {
        package var result: EvalResultRecord
        package var scores: [EvalScoreRecord]

        /// Why the target stopped without a final answer (an agent's step, token or time
        /// limit; a model's `finish_reason` of `length`, `max_tokens` or `content_filter`), from the
        /// answer's metadata.
        package var stopReason: String?
        /// The item's expected answers, as text.
        package var targets: [String]
        /// Where the item came from, for items `dataset add` made: "run 1 cran-5/1 (trace 2) in
        /// FILE", "trace 7 step 3a in FILE"; nil for other items.
        package var source: String?
        /// The answer's stored columns that do not read back, each naming its run, item and
        /// column; the rest of the row reads as stored.
        package var unreadable: [StoredValueError] = []
        /// What each judge scorer asked and answered, by scorer, from its score's details.
        package var judgements: [String: Judgement] = [:]

        /// A model judge's prompt and its raw verdict, as the drill-down shows them.
        package struct Judgement: Hashable, Sendable {
            package var prompt: String
            package var verdict: String

            package init(prompt: String, verdict: String) {
                self.prompt = prompt
                self.verdict = verdict
            }
        }

        /// The row with its JSON columns decoded once, here, rather than on each look.
        package init(result: EvalResultRecord, scores: [EvalScoreRecord]) {
            self.result = result
            self.scores = scores
            let row = "run \(result.runID), item \(result.itemID) epoch \(result.epoch)"
            targets = []
            do {
                targets =
                    (try JSONValue.parse(stored: result.targetsJSON, "targets", row: row, column: "targets_json"))
                    .array?.map(\.text) ?? []
            } catch {
                unreadable.append(error)
            }
            for score in scores {
                guard let details = score.detailsJSON else { continue }
                do {
                    let json = try JSONValue.parse(
                        stored: details, "details", row: row + ", scorer \(score.scorer)", column: "details_json")
                    if let verdict = json["verdict"]?.string {
                        judgements[score.scorer] = Judgement(prompt: json["prompt"]?.string ?? "", verdict: verdict)
                    }
                } catch {
                    unreadable.append(error)
                }
            }
            // Only answers that carry a stop reason or a source pay for parsing their metadata.
            guard
                result.metadataJSON.contains("\"\(EvalService.stopReasonKey)\"")
                    || result.metadataJSON.contains("\"source\"")
            else { return }
            do {
                let metadata = try JSONValue.parse(
                    stored: result.metadataJSON, "metadata", row: row, column: "metadata_json")
                stopReason = metadata[EvalService.stopReasonKey]?.string
                source = Self.source(metadata["source"])
            } catch {
                unreadable.append(error)
            }
        }

        /// The answer as a table shows it: the error, or the output with the stop reason
        /// (`∅ step limit 8 reached` for an empty answer).
        package var shownOutput: String {
            var said = result.error.map { "error: " + $0 } ?? result.output ?? ""
            if let stopReason {
                said = said.isEmpty ? "∅ " + stopReason : said + "  [" + stopReason + "]"
            }
            return said
        }

        package var key: EvalItemKey { result.itemKey }

        package func score(_ scorer: String) -> EvalScoreRecord? { scores.first { $0.scorer == scorer } }

        /// The metadata's `source` object as a line.
        private static func source(_ source: JSONValue?) -> String? {
            guard let source, source.object != nil else { return nil }
            var said: [String] = []
            if let run = source["run"]?.number, let item = source["item"]?.string {
                said.append("run \(Int(run)) \(item)/\(Int(source["epoch"]?.number ?? 1))")
                if let trace = source["trace"]?.number { said.append("(trace \(Int(trace)))") }
            } else if let trace = source["trace"]?.number {
                said.append("trace \(Int(trace))")
                if let span = source["span"]?.string { said.append("step \(span)") }
            }
            if let workspace = source["workspace"]?.string {
                said.append("in " + (workspace as NSString).lastPathComponent)
            }
            return said.isEmpty ? nil : said.joined(separator: " ")
        }

        package var failed: Bool { EvalService.failed(error: result.error, scores: scores) }
    }

    package struct RunDetail: Hashable, Sendable {
        package var listing: RunListing
        package var rows: [ResultRow]

        package init(listing: RunListing, rows: [ResultRow]) {
            self.listing = listing
            self.rows = rows
        }
    }

    /// Every run, oldest first, Inspect logs in the workspace included.
    package func list() throws -> [RunListing] {
        let leases = try runLeases()
        return try evals.evalRuns().map { try listing(Self.shown($0, leases: leases)) }
    }

    /// A run as it should be shown: one stored as running whose process is gone (no live lease)
    /// is "interrupted", and the same command resumes it. Reading changes nothing stored.
    static func shown(_ run: EvalRunRecord, leases: [Int64: JobLease]) -> EvalRunRecord {
        // A run answered by workers has no lease of its own: its items do.
        guard run.status == "running", run.suiteText == nil, !(leases[run.id ?? -1]?.isLive() ?? false) else {
            return run
        }
        var shown = run
        shown.status = "interrupted"
        return shown
    }

    package func detail(_ id: Int64) throws -> RunDetail {
        let run = try evals.existingEvalRun(id)
        let scores = Dictionary(grouping: try evals.evalScores(run: id)) { $0.itemKey }
        let order = try Self.scorers(run)
        let rows = try evals.evalResults(run: id).map { result in
            let mine = (scores[result.itemKey] ?? []).sorted {
                (order.firstIndex(of: $0.scorer) ?? .max, $0.scorer) < (
                    order.firstIndex(of: $1.scorer) ?? .max, $1.scorer
                )
            }
            return ResultRow(result: result, scores: mine)
        }
        let leases = try runLeases()
        return RunDetail(listing: try listing(Self.shown(run, leases: leases)), rows: rows)
    }

    func listing(_ run: EvalRunRecord) throws -> RunListing {
        let scorers = try Self.scorers(run)
        let summary: RunSummary
        // The kept summary is a cache: one that does not read back (or an older revision's) is
        // worked out again from the rows.
        if let json = run.summaryJSON, run.status != "running", run.status != "interrupted",
            let decoded = try? Self.decoder.decode(RunSummary.self, from: Data(json.utf8)),
            decoded.revision == RunSummary.currentRevision
        {
            summary = decoded
        } else {
            summary = try self.summary(run: run.id!)
        }
        var listing = RunListing(run: run, scorers: scorers, summary: summary, answered: summary.rows)
        if let id = run.id { listing.label = try label(run: id) }
        if run.suiteText != nil, let id = run.id {
            listing.work = try evals.evalWorkProgress(run: id)
            listing.workers = try evals.evalWorkers(run: id)
        }
        return listing
    }

    /// The runs a trend joins: the same suite, dataset and target (a changed suite or dataset
    /// starts a new series). Imported Inspect logs join by task and `model` (their target's), as
    /// Inspect's own log list compares them; a log imported before its model was kept is a series
    /// of its own.
    package static func series(_ run: EvalRunRecord, model: String?) -> String {
        var inspect = ""
        if run.source == "inspect" {
            inspect = model.map { "model " + $0 } ?? "log " + (run.suiteFile ?? "")
        }
        return [run.suite, run.suiteHash, run.datasetHash, run.targetKind, inspect].joined(separator: "\u{1F}")
    }

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }()

    /// The run's scorers, in its order; a `scorers_json` that does not read back is an error
    /// naming the run, not a run with no scorers.
    static func scorers(_ run: EvalRunRecord) throws(StoredValueError) -> [String] {
        let json = try JSONValue.parse(
            stored: run.scorersJSON, "scorers", row: "run \(run.id ?? 0)", column: "scorers_json")
        return (json.array ?? []).compactMap(\.string)
    }

    /// The statistics of a run from its stored rows.
    package func summary(run id: Int64) throws -> RunSummary {
        let run = try evals.existingEvalRun(id)
        return RunSummary(rows: try scoredRows(run: id), scorers: try Self.scorers(run))
    }

    package func scoredRows(run id: Int64) throws -> [ScoredRow] {
        let scores = Dictionary(grouping: try evals.evalScores(run: id)) { $0.itemKey }
        return try evals.evalResults(run: id).map { result in
            let mine = scores[result.itemKey] ?? []
            var values: [String: Double] = [:]
            var passed: [String: Bool] = [:]
            for score in mine {
                values[score.scorer] = score.value
                if let pass = score.passed { passed[score.scorer] = pass }
            }
            return ScoredRow(
                itemID: result.itemID, epoch: result.epoch, values: values, passed: passed,
                confidence: result.confidence, latencySeconds: result.latencyMs.map { $0 / 1e3 },
                errored: result.error != nil)
        }
    }

    // MARK: - Comparing

    package struct Comparison: Hashable, Sendable {
        package var a: RunListing
        package var b: RunListing
        package var metrics: RunComparison
        /// Items whose score moved, per shared scorer, for the walkable fixed/regressed lists.
        package var deltasByScorer: [String: [ItemDelta]]
        package var warnings: [String]

        package init(
            a: RunListing, b: RunListing, metrics: RunComparison, deltasByScorer: [String: [ItemDelta]],
            warnings: [String]
        ) {
            self.a = a
            self.b = b
            self.metrics = metrics
            self.deltasByScorer = deltasByScorer
            self.warnings = warnings
        }

        /// The headline scorer: the suite's first that both runs have.
        package var headline: String { metrics.metrics.first?.scorer ?? "" }

        /// The items `scorer` (the headline when nil) moved on, most regressed first.
        package func itemDeltas(_ scorer: String? = nil) -> [ItemDelta] { deltasByScorer[scorer ?? headline] ?? [] }
    }

    package struct ItemDelta: Hashable, Sendable {
        package var itemID: String
        package var input: String
        package var a: Double
        package var b: Double
        package var delta: Double { b - a }

        package init(itemID: String, input: String, a: Double, b: Double) {
            self.itemID = itemID
            self.input = input
            self.a = a
            self.b = b
        }
    }

    /// Run `b` against baseline `a`, paired on the items both answered.
    package func compare(_ a: Int64, _ b: Int64) throws -> Comparison {
        let left = try evals.existingEvalRun(a)
        let right = try evals.existingEvalRun(b)
        let scorersA = try Self.scorers(left)
        let scorersB = try Self.scorers(right)
        let shared = scorersA.filter(scorersB.contains)
        guard !shared.isEmpty else {
            throw EvalError(
                "runs \(a) and \(b) share no scorer (\(scorersA.joined(separator: ", ")) vs \(scorersB.joined(separator: ", ")))"
            )
        }
        let rowsA = try scoredRows(run: a)
        let rowsB = try scoredRows(run: b)
        let metrics = RunComparison(a: rowsA, b: rowsB, scorers: shared)
        var warnings: [String] = []
        if left.suite != right.suite {
            warnings.append("the runs are of different suites (\(left.suite), \(right.suite))")
        }
        if left.datasetHash != right.datasetHash { warnings.append("the datasets differ (hash)") }
        // Embeddings matter only to a target that reads them: not to BM25 on both sides.
        let lexical = try [left, right].allSatisfy { run throws(StoredValueError) in
            try JSONValue.parse(stored: run.targetJSON, "target", row: "run \(run.id ?? 0)", column: "target_json")[
                "retriever"]?.string == "bm25"
        }
        func state(_ run: EvalRunRecord) throws(StoredValueError) -> JSONValue? {
            try run.workspaceJSON.map { json throws(StoredValueError) in
                try JSONValue.parse(stored: json, "workspace", row: "run \(run.id ?? 0)", column: "workspace_json")
            }
        }
        if let stateA = try state(left), let stateB = try state(right),
            stateA["corpus"] != stateB["corpus"] || stateA["chunks"] != stateB["chunks"]
                || (!lexical && stateA["embedded"] != stateB["embedded"]),
            let lineA = Self.workspaceLine(stateA), let lineB = Self.workspaceLine(stateB)
        {
            warnings.append(
                "the runs searched different corpora: run \(a) \(lineA); run \(b) \(lineB) (a change may come from the data)"
            )
        }
        if let first = metrics.metrics.first, first.paired.itemSetsDiffer {
            warnings.append(
                "item sets differ: \(first.paired.onlyInA.count) only in run \(a), \(first.paired.onlyInB.count) only in run \(b); compared on the \(first.paired.n) in both"
            )
        }
        // An item's score per scorer: pass/fail as 1/0 where the scorer has a threshold, averaged
        // over epochs.
        func means(_ rows: [ScoredRow], _ scorer: String) -> [String: Double] {
            var sums: [String: (Double, Int)] = [:]
            for row in rows {
                guard let value = row.passed[scorer].map({ $0 ? 1.0 : 0 }) ?? row.values[scorer] else { continue }
                sums[row.itemID, default: (0, 0)].0 += value
                sums[row.itemID, default: (0, 0)].1 += 1
            }
            return sums.mapValues { $0.0 / Double($0.1) }
        }
        let inputs = Dictionary(
            try evals.evalResults(run: b).map { ($0.itemID, $0.input) }, uniquingKeysWith: { x, _ in x })
        var deltasByScorer: [String: [ItemDelta]] = [:]
        for scorer in shared {
            let meanA = means(rowsA, scorer)
            let meanB = means(rowsB, scorer)
            deltasByScorer[scorer] = meanA.keys.filter { meanB[$0] != nil && meanB[$0] != meanA[$0] }.map {
                ItemDelta(itemID: $0, input: inputs[$0] ?? "", a: meanA[$0]!, b: meanB[$0]!)
            }.sorted { ($0.delta, $0.itemID) < ($1.delta, $1.itemID) }
        }
        return Comparison(
            a: try listing(left), b: try listing(right), metrics: metrics, deltasByScorer: deltasByScorer,
            warnings: warnings)
    }

    // MARK: - Exporting

    package enum ExportFormat: String, CaseIterable, Sendable {
        case csv, json
    }

    /// Every answer of a run with its scores: one CSV row per answer (a value and a pass column
    /// per scorer), or JSON with the run's provenance and summary.
    package func export(_ id: Int64, format: ExportFormat) throws -> String {
        let detail = try detail(id)
        let scorers = detail.listing.scorers
        switch format {
        case .csv:
            var header = [
                "item_id", "epoch", "input", "targets", "output", "error", "latency_ms", "trace_id",
                "retrieval_record_id",
            ]
            for scorer in scorers { header += [scorer, scorer + "_passed"] }
            var lines = [header.map(Self.csvField).joined(separator: ",")]
            for row in detail.rows {
                let result = row.result
                var fields = [
                    result.itemID, String(result.epoch), result.input, row.targets.joined(separator: " | "),
                    result.output ?? "", result.error ?? "", result.latencyMs.map { String(format: "%.3f", $0) } ?? "",
                    result.traceID.map(String.init) ?? "", result.retrievalRecordID.map(String.init) ?? "",
                ]
                for scorer in scorers {
                    let score = row.score(scorer)
                    fields += [score.map { String($0.value) } ?? "", score?.passed.map { $0 ? "1" : "0" } ?? ""]
                }
                lines.append(fields.map(Self.csvField).joined(separator: ","))
            }
            return lines.joined(separator: "\n") + "\n"
        case .json:
            let run = detail.listing.run
            // The summary is Loupe's own; one it cannot write is a bug to report, not a null to ship.
            let summaryJSON: JSONValue
            do {
                summaryJSON = try JSONValue.parse(Self.encoder.encode(detail.listing.summary))
            } catch {
                throw EvalError("run \(id): its summary could not be written as JSON: \(error)")
            }
            let results: [JSONValue] = detail.rows.map { row in
                let result = row.result
                var object: [String: JSONValue] = [
                    "item_id": .string(result.itemID), "epoch": .number(Double(result.epoch)),
                    "input": .string(result.input), "targets": .array(row.targets.map { .string($0) }),
                    "output": result.output.map { .string($0) } ?? .null,
                    "error": result.error.map { .string($0) } ?? .null,
                    "latency_ms": result.latencyMs.map { .number($0) } ?? .null,
                    "trace_id": result.traceID.map { .number(Double($0)) } ?? .null,
                    "retrieval_record_id": result.retrievalRecordID.map { .number(Double($0)) } ?? .null,
                ]
                object["scores"] = .object(
                    Dictionary(
                        row.scores.map { score in
                            (
                                score.scorer,
                                JSONValue.object([
                                    "value": .number(score.value), "passed": score.passed.map { .bool($0) } ?? .null,
                                    "explanation": .string(score.explanation),
                                ])
                            )
                        }, uniquingKeysWith: { a, _ in a }))
                return .object(object)
            }
            return JSONValue.object([
                "run": Self.runJSON(run), "summary": summaryJSON, "results": .array(results),
            ]).prettyJSON + "\n"
        }
    }

    /// A run's record as JSON (`eval show --json`, export, MCP). Its stored JSON columns (target,
    /// scorers, workspace) are parsed back; one that does not parse is null, and an `unreadable`
    /// list, present only then, names the run, the column and where its text breaks, so a reader
    /// tells a damaged value from one that was never stored.
    package static func runJSON(_ run: EvalRunRecord) -> JSONValue {
        let formatter = ISO8601DateFormatter()
        var unreadable: [JSONValue] = []
        func stored(_ text: String?, column: String) -> JSONValue {
            guard let text else { return .null }
            do {
                return try JSONValue.parse(text)
            } catch {
                unreadable.append(.string("run \(run.id.map(String.init) ?? "?"), column \(column): \(error)"))
                return .null
            }
        }
        var members: [String: JSONValue] = [
            "id": .number(Double(run.id ?? 0)), "suite": .string(run.suite),
            "suite_file": run.suiteFile.map { .string($0) } ?? .null, "suite_hash": .string(run.suiteHash),
            "dataset_hash": .string(run.datasetHash), "target": stored(run.targetJSON, column: "target_json"),
            "scorers": stored(run.scorersJSON, column: "scorers_json"), "epochs": .number(Double(run.epochs)),
            "planned": .number(Double(run.planned)), "status": .string(run.status), "source": .string(run.source),
            "parent_run_id": run.parentRunID.map { .number(Double($0)) } ?? .null,
            "loupe_version": .string(run.loupeVersion), "git_revision": run.gitRevision.map { .string($0) } ?? .null,
            "workspace": stored(run.workspaceJSON, column: "workspace_json"),
            "started_at": .string(formatter.string(from: run.startedAt)),
            "ended_at": run.endedAt.map { .string(formatter.string(from: $0)) } ?? .null,
        ]
        if !unreadable.isEmpty { members["unreadable"] = .array(unreadable) }
        return .object(members)
    }

    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    // MARK: - Inspect logs as runs

    /// Inspect samples imported as traces become eval runs: one per log file and task, one
    /// answer per sample × epoch with the log's scores (C/P/I as 1/0.5/0), linked to the trace.
    /// Idempotent: a log already turned into a run is skipped. Trace import calls it, so that
    /// reading the runs never writes.
    package func syncInspectRuns() throws {
        // Traces already answering an imported run are skipped before their metadata is read, so
        // a synced workspace costs one query.
        let linked = try evals.evalTraceIDs(source: "inspect")
        let traces = TraceTables(evals.database)
        let inspect = try traces.traceSummaries().filter {
            $0.format == TraceFormat.inspect.rawValue && !linked.contains($0.id)
        }
        guard !inspect.isEmpty else { return }
        var groups: [String: [(TraceSummary, JSONObject)]] = [:]
        var order: [String] = []
        for trace in inspect {
            let metadata =
                try (try traces.traceMetadata(trace: trace.id)).map { json throws(StoredValueError) in
                    try JSONValue.parse(stored: json, "metadata", row: "trace \(trace.id)", column: "metadata_json")
                }?.object ?? [:]
            let task = metadata["task"]?.string ?? "task"
            let key = (trace.sourceFile ?? "?") + "#" + task
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append((trace, metadata))
        }
        for key in order where try evals.evalRun(source: "inspect", key: key) == nil {
            let members = groups[key]!
            var scorerNames: [String] = []
            var rows: [(EvalResultRecord, [EvalScoreRecord])] = []
            var epochs = 1
            var seen: Set<EvalItemKey> = []
            for (trace, metadata) in members {
                let itemID = metadata["sample_id"].map { $0.string ?? $0.compactJSON } ?? String(trace.id)
                let epoch = Int(metadata["epoch"]?.int ?? 1)
                guard seen.insert(EvalItemKey(itemID: itemID, epoch: epoch)).inserted else { continue }
                epochs = max(epochs, epoch)
                let scores = try traces.traceScores(trace: trace.id)
                var records: [EvalScoreRecord] = []
                for (index, score) in scores.enumerated() {
                    let value = try JSONValue.parse(
                        stored: score.valueJSON, "score value", row: "trace \(trace.id), score \(index)",
                        column: "value_json")
                    guard let (number, passed) = Self.inspectValue(value) else { continue }
                    if !scorerNames.contains(score.scorer) { scorerNames.append(score.scorer) }
                    records.append(
                        EvalScoreRecord(
                            runID: 0, itemID: itemID, epoch: epoch, scorer: score.scorer, value: number, passed: passed,
                            explanation: [score.answer.map { "answer \($0)" }, score.explanation].compactMap { $0 }
                                .joined(separator: " — ")))
                }
                let targets: [String] =
                    metadata["target"].map { $0.array?.map(\.text) ?? [$0.text] } ?? []
                // The sample's answer: the last message a model produced; its error: the sample's own
                // (a failed tool call inside it is part of the transcript, not an error of the sample).
                let spans = try TraceService(tables: traces).trace(trace.id).spans
                let output = spans.last { $0.kind == .llm && !($0.output.last?.text.isEmpty ?? true) }?.output.last?
                    .text
                let sampleError = spans.first?.status.message
                rows.append(
                    (
                        EvalResultRecord(
                            runID: 0, itemID: itemID, epoch: epoch, input: metadata["input"]?.text ?? "",
                            targetsJSON: JSONValue.array(targets.map { .string($0) }).compactJSON,
                            output: output,
                            error: sampleError,
                            latencyMs: trace.timed ? Double(trace.durationNs) / 1e6 : nil,
                            inputTokens: trace.inputTokens, outputTokens: trace.outputTokens, cost: trace.cost,
                            traceID: trace.id, finishedAt: trace.importedAt),
                        records
                    ))
            }
            let task = String(key[key.index(after: key.lastIndex(of: "#")!)...])
            let file = String(key[..<key.lastIndex(of: "#")!])
            // The models the log's samples called: with the task, what makes two logs' runs a
            // comparable series.
            let models = Set(members.flatMap(\.0.models)).sorted()
            var target: [(String, JSONValue)] = [("kind", "inspect"), ("log", .string(file))]
            if !models.isEmpty { target.append(("model", .string(models.joined(separator: ", ")))) }
            var run = EvalRunRecord(
                suite: "inspect:" + task, suiteFile: file, suiteHash: "", datasetHash: "", targetKind: "inspect",
                targetJSON: JSONValue.object(JSONObject(target)).compactJSON,
                scorersJSON: JSONValue.array(scorerNames.map { .string($0) }).compactJSON, epochs: epochs,
                planned: rows.count, status: "complete", source: "inspect", sourceKey: key,
                loupeVersion: loupeVersion, gitRevision: nil, startedAt: members.map(\.0.importedAt).min() ?? Date())
            run.endedAt = run.startedAt
            let id = try evals.createEvalRun(run)
            try evals.recordEvalResults(
                rows.map { result, scores in
                    var result = result
                    result.runID = id
                    return (
                        result,
                        scores.map {
                            var score = $0
                            score.runID = id
                            return score
                        }
                    )
                })
            try evals.finishEvalRun(
                id, status: "complete", summaryJSON: Self.encode(try summary(run: id)), at: run.startedAt)
        }
    }

    /// Inspect's value_to_float: C 1, P 0.5, I 0, N 0; yes/no and booleans; numbers as they are.
    static func inspectValue(_ value: JSONValue) -> (Double, Bool?)? {
        switch value {
        case .bool(let flag): return (flag ? 1 : 0, flag)
        case .number(let number): return (number, nil)
        case .string(let text):
            switch text.uppercased() {
            case "C", "CORRECT", "YES", "TRUE": return (1, true)
            case "I", "INCORRECT", "NO", "FALSE", "N": return (0, false)
            case "P", "PARTIAL": return (0.5, nil)
            default: return Double(text).map { ($0, nil) }
            }
        default: return nil
        }
    }
}

extension EvalResultRecord {
    /// Where the answer's evidence is, in a few words: its trace or its retrieval record.
    package var evidence: String {
        if let trace = traceID { return "trace \(trace)" }
        if let record = retrievalRecordID { return "record \(record)" }
        return "—"
    }
}

extension EvalService.RunListing {
    /// The retrieval settings a retrieval run was made with (retriever, stemming, k, k1, b), so
    /// an answer's ranking can be re-run as it was; nil for other targets. A `target_json` that
    /// does not read back is an error naming the run, not a run that was never a retrieval run.
    package func retrievalOptions() throws(StoredValueError) -> RetrievalService.Options? {
        let json = try JSONValue.parse(
            stored: run.targetJSON, "target", row: "run \(run.id ?? 0)", column: "target_json")
        guard json["retriever"] != nil else { return nil }
        var options = RetrievalService.Options()
        if let retriever = json["retriever"]?.string.flatMap(RetrievalService.Retriever.init(rawValue:)) {
            options.retriever = retriever
        }
        options.stem = json["stem"]?.bool ?? false
        options.k = Int(json["k"]?.int ?? 10)
        options.k1 = json["k1"]?.number ?? options.k1
        options.b = json["b"]?.number ?? options.b
        return options
    }
}
