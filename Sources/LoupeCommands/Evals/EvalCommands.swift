import ArgumentParser
import Foundation
import Glibc
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupePostgres
import LoupeRetrieval
import LoupeStore
import Synchronization

/// `loupe eval run|list|show|compare|export`: what the Evals panel shows, on the shell.
struct EvalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval", abstract: "Run eval suites and read, compare and export their runs.",
        subcommands: [
            Run.self, Worker.self, List.self, Show.self, Label.self, Compare.self, Export.self, Calibrate.self,
            Plan.self,
        ])

    /// The eval service on the workspace; readers (list, show, compare, export) open it read-only,
    /// so they work beside a running `eval run` and on a read-only or full workspace.
    static func service(_ context: CommandContext, access: WorkspaceAccess = .write) throws -> EvalService {
        var service =
            context.session.isPostgres
            ? EvalService(evals: EvalTables(try context.session.postgres()), models: context.session.models)
            : EvalService(workspace: try context.workspace(access: access), models: context.session.models)
        service.loupeVersion = Loupe.version
        return service
    }

    /// Suite, dataset and eval errors are the user's to fix: say them plainly.
    static func plainly<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SuiteError {
            throw CommandFailure(UntrustedText.sanitized(error.description))
        } catch let error as EvalError {
            throw CommandFailure(error.description)
        } catch let error as RetrievalError {
            throw CommandFailure(error.description)
        }
    }

    struct Run: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a suite: every item (× epochs) through its target, scored by its scorers.",
            discussion: """
                Each answer is stored as it finishes. A run that was killed or cancelled resumes where it \
                stopped when the same suite runs again (same suite file, dataset and epochs); --new starts \
                afresh. --only-failed RUN re-runs the failed or errored answers of RUN and carries the \
                others over into the new run, so it can be compared with RUN item by item.

                --workers only queues the run's items in the workspace: `loupe eval worker` processes, on this \
                machine or any other that reaches the workspace (a PostgreSQL URL), answer them. A run on a \
                PostgreSQL workspace is always answered by workers.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The suite file (YAML).") var suite: String
        @Option(help: "Trials per item (default: the suite's epochs, else 1).") var epochs: Int?
        @Option(help: "Items answered at once (agent and model targets).") var concurrency: Int?
        @Option(help: "Only the first N items.") var limit: Int?
        @Option(help: "Re-run the failed items of this run.") var onlyFailed: Int64?
        @Flag(name: .customLong("new"), help: "Start a new run instead of resuming an unfinished one.") var fresh =
            false
        @Flag(help: "Queue the items for `loupe eval worker` processes instead of answering them here.")
        var workers = false
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let service = try EvalCommand.service(context)
            if workers || context.session.isPostgres { return try queue(service, context) }
            var options = EvalService.RunOptions()
            options.epochs = epochs
            options.concurrency = concurrency
            options.limit = limit
            options.onlyFailed = onlyFailed
            options.fresh = fresh
            if let epochs, epochs < 1 { throw CommandFailure("--epochs must be at least 1") }
            if let limit, limit < 1 { throw CommandFailure("--limit must be at least 1") }
            let outcome = try EvalCommand.plainly {
                let loaded = try service.load(suite)
                // Ctrl-C (or SIGTERM) on the shell cancels: the answers made are kept, the run is
                // marked cancelled, and the same command resumes it.
                return try Interrupt.cancellable(context) {
                    try service.run(loaded, options: options, reporter: context.reporter)
                }
            }
            if json {
                let listing = try service.list().first { $0.id == outcome.runID }!
                return context.print(try EvalCommand.listingJSON(listing).prettyJSON)
            }
            var said = "run \(outcome.runID) \(outcome.status)"
            if let parent = onlyFailed {
                said +=
                    outcome.resumed
                    ? " (resumed: \(outcome.skipped) answers were already there or carried over from run \(parent))"
                    : " (\(outcome.skipped) answers carried over from run \(parent))"
            } else if outcome.resumed {
                said += " (resumed: \(outcome.skipped) answers were already there)"
            }
            said += ": \(Formatting.count(outcome.answered, "answer")) made"
            context.print(said)
            if !outcome.unjudged.isEmpty {
                context.print("left out \(Formatting.count(outcome.unjudged.count, "item")) with no judgments")
            }
            EvalCommand.printSummary(outcome.summary, scorers: outcome.summary.scorers.map(\.scorer), context)
            if outcome.status == "cancelled" {
                // A stopped run is not a success: shells and CI see 128 + the signal, as for any
                // process ended by one, and the message says how to go on.
                let number = Interrupt.lastSignal ?? SIGINT
                throw CommandExit(
                    code: 128 + number,
                    "run \(outcome.runID) cancelled by \(number == SIGTERM ? "SIGTERM" : "SIGINT"); "
                        + "run the same command again to resume")
            }
        }

        /// `--workers`: the run and its items in the workspace, for `loupe eval worker` to answer.
        private func queue(_ service: EvalService, _ context: CommandContext) throws {
            if !workers {
                throw CommandFailure(
                    "on a PostgreSQL workspace a run is answered by workers: add --workers, then start "
                        + "loupe eval worker --workspace \(context.session.displayPath) on any machine that reaches it")
            }
            if let epochs, epochs < 1 { throw CommandFailure("--epochs must be at least 1") }
            if let limit, limit < 1 { throw CommandFailure("--limit must be at least 1") }
            var options = EvalService.RunOptions()
            options.epochs = epochs
            options.limit = limit
            options.onlyFailed = onlyFailed
            let outcome = try EvalCommand.plainly { try service.queue(try service.load(suite), options: options) }
            if json {
                return context.print(
                    JSONValue.object([
                        "run": .number(Double(outcome.runID)), "queued": .number(Double(outcome.queued)),
                        "status": "running",
                    ]).prettyJSON)
            }
            context.print(
                "run \(outcome.runID) queued: \(Formatting.count(outcome.queued, "answer")) for workers. Start them "
                    + "on any machine that reaches the workspace:")
            context.print("  loupe eval worker \(outcome.runID) --workspace \(context.session.displayPath)")
            if !outcome.unjudged.isEmpty {
                context.print("left out \(Formatting.count(outcome.unjudged.count, "item")) with no judgments")
            }
        }
    }

    static func printSummary(_ summary: RunSummary, scorers: [String], _ context: CommandContext) {
        context.print(
            "\(Formatting.count(summary.items, "item")), \(Formatting.count(summary.rows, "answer")), "
                + "\(Formatting.count(summary.errors, "error"))"
                + (summary.medianLatency.map { String(format: ", median latency %.1f ms", $0.estimate * 1e3) } ?? ""))
        context.print(
            "scorer               statistic   value   95% interval       method             n   bootstrap 95%")
        for scorer in scorers {
            guard let s = summary.scorers.first(where: { $0.scorer == scorer }) else { continue }
            let i = s.interval
            context.print(
                TextWidth.truncate(scorer, toColumns: 20).padded(to: 20) + " " + s.statistic.padded(to: 10)
                    + String(format: "  %6.3f   [%.3f, %.3f]  ", i.estimate, i.lower, i.upper)
                    + i.method.padded(to: 17)
                    + String(format: " %4d   [%.3f, %.3f]", i.n, s.bootstrap.lower, s.bootstrap.upper))
            if !s.passAtK.isEmpty {
                context.print(
                    "    pass@k "
                        + s.passAtK.map { String(format: "k%d %.3f", $0.k, $0.passAt) }.joined(separator: "  "))
                context.print(
                    "    pass^k "
                        + s.passAtK.map { String(format: "k%d %.3f", $0.k, $0.passHat) }.joined(separator: "  "))
            }
            if let c = s.calibration {
                context.print(
                    String(
                        format: "    ECE %.3f  Brier %.3f  (n %d, 10 bins) — reliability:", c.expectedCalibrationError,
                        c.brierScore, c.n))
                for line in c.diagram() { context.print("      " + line) }
            }
        }
    }

    static func listingJSON(_ listing: EvalService.RunListing) throws -> JSONValue {
        guard case .object(var run) = EvalService.runJSON(listing.run) else { return .null }
        let encoder = EvalService.encoder
        run["summary"] = try JSONValue.parse(encoder.encode(listing.summary))
        run["answered"] = .number(Double(listing.answered))
        run["label"] = listing.label.map(JSONValue.string) ?? .null
        return .object(run)
    }

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every eval run (Inspect logs in the workspace included) with its headline metric.")

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let runs = try EvalCommand.plainly { try EvalCommand.service(context, access: .read).list() }
            if json { return context.print(JSONValue.array(try runs.map(EvalCommand.listingJSON)).prettyJSON) }
            guard !runs.isEmpty else { return context.print("no eval runs yet: loupe eval run SUITE.yaml") }
            // Labelled runs get a wider suite column, so the label does not push the suite out.
            let suiteWidth = runs.contains { $0.label != nil } ? 40 : 24
            context.print(
                "  id  " + "suite".padded(to: suiteWidth)
                    + "  target      status       answers  headline                        when")
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyy-MM-dd HH:mm"
            for listing in runs {
                let run = listing.run
                context.print(
                    String(format: "%4lld  ", listing.id)
                        + TextWidth.truncate(
                            UntrustedText.sanitized((listing.label.map { $0 + " · " } ?? "") + run.suite),
                            toColumns: suiteWidth
                        ).padded(to: suiteWidth) + "  "
                        + run.targetKind.padded(to: 10) + "  " + run.status.padded(to: 12) + " "
                        + "\(listing.answered)/\(run.planned)".leftPadded(to: 7) + "  "
                        + EvalCommand.headline(listing).padded(to: 30) + "  " + formatter.string(from: run.startedAt))
            }
        }
    }

    struct Label: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Name a run (\"baseline\", \"prompt v2\"): the runs list shows it before the suite.",
            discussion: """
                The label is kept in the workspace; an empty one (or --clear) removes it. At most \
                \(EvalService.longestLabel) characters.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The run's id (loupe eval list).") var id: Int64
        @Argument(help: "The label; the words are joined with spaces.") var words: [String] = []
        @Flag(help: "Remove the run's label.") var clear = false

        func run(in context: CommandContext) throws {
            let text = clear ? "" : words.joined(separator: " ")
            guard clear || !text.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw CommandFailure("give the label's text, or --clear to remove it")
            }
            let service = try EvalCommand.service(context)
            try EvalCommand.plainly { try service.setLabel(text, run: id) }
            let label = try service.label(run: id)
            context.print(
                label.map { "run \(id) is labelled “\(UntrustedText.sanitized($0))”" } ?? "run \(id) has no label")
        }
    }

    static func headline(_ listing: EvalService.RunListing) -> String {
        guard let h = listing.headline else { return "—" }
        return TextWidth.truncate(h.scorer, toColumns: 14)
            + String(format: " %.3f ±%.3f", h.interval.estimate, h.interval.halfWidth)
    }

    struct Show: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "A run: provenance, every scorer's statistics, and its answers with their scores.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The run's id (loupe eval list).") var id: Int64
        @Option(help: "Answers listed at most (0: none).") var rows = 20
        @Flag(help: "List only failed or errored answers.") var failed = false
        @Flag(help: "Print JSON (everything).") var json = false

        func run(in context: CommandContext) throws {
            let service = try EvalCommand.service(context, access: .read)
            if json {
                return context.print(
                    String(try EvalCommand.plainly { try service.export(id, format: .json) }.dropLast()))
            }
            let detail = try EvalCommand.plainly { try service.detail(id) }
            let run = detail.listing.run
            context.print(
                "run \(id) · \(UntrustedText.sanitized(run.suite)) · \(run.targetKind) · \(run.status) · "
                    + "epochs \(run.epochs) · loupe \(run.loupeVersion)"
                    + (run.gitRevision.map { " · git \($0)" } ?? ""))
            if let file = run.suiteFile {
                context.print(
                    (run.source == "inspect" ? "log " : "suite ") + UntrustedText.sanitized(file)
                        + (run.suiteHash.isEmpty
                            ? "" : " (sha256 \(run.suiteHash.prefix(12)), dataset \(run.datasetHash.prefix(12)))"))
            }
            if let state = detail.listing.searched { context.print("searched " + state) }
            if let parent = run.parentRunID { context.print("re-run of the failed answers of run \(parent)") }
            EvalCommand.printSummary(detail.listing.summary, scorers: detail.listing.scorers, context)
            EvalCommand.printWorkers(detail.listing, context)
            // Every answer whose stored JSON does not read back is named, listed or not: its targets
            // or source would otherwise read as empty.
            for problem in detail.listing.unreadable + detail.rows.flatMap(\.unreadable) {
                context.print("⚠ " + UntrustedText.sanitized(problem.description))
            }
            let shown = detail.rows.filter { !failed || $0.failed }
            guard rows > 0, !shown.isEmpty else { return }
            context.print("")
            context.print(
                "item        epoch  "
                    + detail.listing.scorers.map { TextWidth.truncate($0, toColumns: 9).padded(to: 9) }.joined(
                        separator: " ") + "  latency  evidence    output")
            for row in shown.prefix(rows) {
                let values = detail.listing.scorers.map { scorer -> String in
                    guard let score = row.score(scorer) else { return "—".padded(to: 9) }
                    let mark = score.passed.map { $0 ? "✓" : "✗" } ?? " "
                    return (String(format: "%.3f", score.value) + mark).padded(to: 9)
                }
                let output = row.shownOutput
                context.print(
                    TextWidth.truncate(UntrustedText.sanitized(row.result.itemID), toColumns: 10).padded(to: 10)
                        + String(format: "  %5d  ", row.result.epoch) + values.joined(separator: " ")
                        + (row.result.latencyMs.map { String(format: " %6.0fms", $0) } ?? "        ") + "  "
                        + row.result.evidence.padded(to: 10) + "  "
                        + TextWidth.truncate(
                            UntrustedText.sanitized(output.replacingOccurrences(of: "\n", with: " ")), toColumns: 48))
            }
            if shown.count > rows {
                context.print("… \(shown.count - rows) more (--rows N, or loupe eval export \(id))")
            }
            let kept = shown.prefix(rows).compactMap { row in row.source.map { (row, $0) } }
            if !kept.isEmpty {
                context.print("answers to items kept from what was seen (loupe dataset add):")
                for (row, source) in kept {
                    context.print(
                        "  "
                            + TextWidth.truncate(UntrustedText.sanitized(row.result.itemID), toColumns: 10).padded(
                                to: 10)
                            + (row.result.traceID.map { " trace \($0)" } ?? "") + "  ← "
                            + UntrustedText.sanitized(source))
                }
            }
        }
    }

    struct Compare: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run B against baseline A on the items both answered: paired differences with CIs and p-values.",
            discussion: """
                Per scorer: the mean of per-item differences with its interval and p-value, which agree on \
                significance: for pass/fail scorers with one epoch Tango's score interval and McNemar's \
                asymptotic test, else a Student-t interval and a paired t-test. Then wins/ties/losses, the \
                minimum detectable effect at this n (80% power, α 0.05), and Benjamini-Hochberg adjusted \
                p-values across scorers. Items fixed and regressed follow.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The baseline run.") var a: Int64
        @Argument(help: "The run compared with it.") var b: Int64
        @Option(help: "Fixed and regressed items listed at most.") var items = 10
        @Option(help: "List the items this scorer fixed and regressed (default: the suite's first).")
        var scorer: String?
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let comparison = try EvalCommand.plainly { try EvalCommand.service(context, access: .read).compare(a, b) }
            if let scorer, comparison.deltasByScorer[scorer] == nil {
                throw CommandFailure(
                    "--scorer \(UntrustedText.sanitized(scorer)): runs \(a) and \(b) share "
                        + UntrustedText.sanitized(comparison.metrics.metrics.map(\.scorer).joined(separator: ", ")))
            }
            if json { return context.print(try EvalCommand.comparisonJSON(comparison).prettyJSON) }
            for warning in comparison.warnings { context.print("warning: \(warning)") }
            context.print(
                "run \(b) (\(UntrustedText.sanitized(comparison.b.run.suite))) vs baseline run \(a) (\(UntrustedText.sanitized(comparison.a.run.suite)))"
            )
            context.print(
                "scorer               A      B      B−A    95% interval        p       p(BH)   W/T/L        MDE")
            for metric in comparison.metrics.metrics {
                let p = metric.paired
                context.print(
                    TextWidth.truncate(metric.scorer, toColumns: 18).padded(to: 18)
                        + String(format: " %6.3f %6.3f %+7.3f  ", p.meanA, p.meanB, p.difference.estimate)
                        + (p.differenceIntervalUndefined != nil
                            ? "—".padded(to: 16)
                            : String(format: "[%+.3f, %+.3f]", p.difference.lower, p.difference.upper))
                        + String(format: "  %7.4f %7.4f", p.pValue, metric.adjustedPValue)
                        + (metric.significant ? "* " : "  ")
                        + "\(p.wins)/\(p.ties)/\(p.losses)".padded(to: 11)
                        + (p.minimumDetectableEffect.isNaN ? " —" : String(format: " %.3f", p.minimumDetectableEffect)))
                if let why = p.minimumDetectableEffectUndefined {
                    context.print("    \(p.differenceIntervalUndefined != nil ? "CI and MDE" : "MDE") —: \(why)")
                }
                if let m = p.mcnemar {
                    context.print(
                        "    pass/fail: \(m.fixed) fixed, \(m.regressed) regressed; interval: Tango's score; "
                            + "p: McNemar's \(m.method) test")
                }
            }
            let deltas = comparison.itemDeltas(scorer)
            let fixed = deltas.filter { $0.delta > 0 }.reversed()
            let regressed = deltas.filter { $0.delta < 0 }
            let headline = UntrustedText.sanitized(scorer ?? comparison.headline)
            context.print("fixed (\(headline) up): \(fixed.count)")
            for item in fixed.prefix(items) { context.print(EvalCommand.deltaLine(item)) }
            context.print("regressed (\(headline) down): \(regressed.count)")
            for item in regressed.prefix(items) { context.print(EvalCommand.deltaLine(item)) }
        }
    }

    static func deltaLine(_ item: EvalService.ItemDelta) -> String {
        "  " + TextWidth.truncate(UntrustedText.sanitized(item.itemID), toColumns: 10).padded(to: 10)
            + String(format: " %.3f → %.3f  ", item.a, item.b)
            + TextWidth.truncate(
                UntrustedText.sanitized(item.input.replacingOccurrences(of: "\n", with: " ")), toColumns: 70)
    }

    /// `value` with every figure the encoder wrote as "nan" (an undefined statistic: the MDE of
    /// identical runs, a p-value of one item) as null, which JSON readers take as missing.
    static func nullingNaN(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string("nan"): return .null
        case .object(let object): return .object(JSONObject(object.map { ($0.key, nullingNaN($0.value)) }))
        case .array(let array): return .array(array.map(nullingNaN))
        default: return value
        }
    }

    /// A paired comparison as JSON: undefined figures null, and an interval collapsed onto its
    /// estimate (no spread in the differences) null at both ends, as the screen shows "—".
    static func paired(_ paired: PairedComparison, encoder: JSONEncoder) throws -> JSONValue {
        var value = nullingNaN(try JSONValue.parse(encoder.encode(paired)))
        if paired.differenceIntervalUndefined != nil, case .object(var object) = value,
            case .object(var difference)? = object["difference"]
        {
            difference["lower"] = .null
            difference["upper"] = .null
            object["difference"] = .object(difference)
            value = .object(object)
        }
        return value
    }

    static func comparisonJSON(_ comparison: EvalService.Comparison) throws -> JSONValue {
        let encoder = EvalService.encoder
        let metrics = try comparison.metrics.metrics.map { metric -> JSONValue in
            .object([
                "scorer": .string(metric.scorer),
                "paired": try Self.paired(metric.paired, encoder: encoder),
                "mde_undefined": metric.paired.minimumDetectableEffectUndefined.map { .string($0) } ?? .null,
                "interval_undefined": metric.paired.differenceIntervalUndefined.map { .string($0) } ?? .null,
                "p_bh": .number(metric.adjustedPValue), "significant": .bool(metric.significant),
            ])
        }
        return .object([
            "a": .number(Double(comparison.a.id)), "b": .number(Double(comparison.b.id)),
            "warnings": .array(comparison.warnings.map { .string($0) }), "metrics": .array(metrics),
            "items": .array(
                comparison.itemDeltas().map {
                    .object(["item_id": .string($0.itemID), "a": .number($0.a), "b": .number($0.b)])
                }),
            "items_by_scorer": .object(
                comparison.deltasByScorer.mapValues { deltas in
                    .array(
                        deltas.map { .object(["item_id": .string($0.itemID), "a": .number($0.a), "b": .number($0.b)]) })
                }),
        ])
    }

    struct Export: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a run's answers and scores as CSV or JSON (with provenance and statistics).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The run's id.") var id: Int64
        @Option(help: "csv or json (a file's .csv or .json ending decides for it).") var format = "csv"
        @Option(
            name: .shortAndLong,
            help: "Write here instead of standard output; give it twice for both forms (-o run.csv -o run.json).")
        var output: [String] = []

        func run(in context: CommandContext) throws {
            guard let chosen = EvalService.ExportFormat(rawValue: format.lowercased()) else {
                throw CommandFailure("--format \(format): use csv or json")
            }
            let service = try EvalCommand.plainly { try EvalCommand.service(context, access: .read) }
            guard !output.isEmpty else {
                let text = try EvalCommand.plainly { try service.export(id, format: chosen) }
                return context.print(String(text.dropLast()))
            }
            var wrote: [String] = []
            for path in output {
                let form =
                    EvalService.ExportFormat(rawValue: (path as NSString).pathExtension.lowercased()) ?? chosen
                let text = try EvalCommand.plainly { try service.export(id, format: form) }
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                wrote.append("as \(form.rawValue) to \(path)")
            }
            let directory = FileManager.default.currentDirectoryPath
            context.print(
                "wrote run \(id) " + wrote.joined(separator: " and ")
                    + (output.allSatisfy { !$0.hasPrefix("/") } ? " (in \(directory))" : ""))
        }
    }
}
