import ArgumentParser
import Foundation
import LoupeAgents
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore

/// `loupe review …`: annotation queues on the shell — everything the Review view does, as commands
/// a notebook or a script can run.
struct ReviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "review", abstract: "Label answers and traces against a rubric, in queues.",
        subcommands: [
            QueueGroup.self, Next.self, Label.self, Skip.self, Undo.self, Progress.self, Compare.self, Export.self,
            Import.self, As.self,
        ])

    struct As: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Who labels: keep your name for the Review panel and these commands (or say who it is).",
            discussion: """
                The name goes to ~/.config/loupe/annotator ($XDG_CONFIG_HOME/loupe/annotator): yours, not \
                the workspace's. --as and LOUPE_USER still win over it; the login name is the last resort.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Your name as an annotator (one line, no commas).") var name: String?

        func run(in context: CommandContext) throws {
            let environment = ProcessInfo.processInfo.environment
            guard let name else {
                let current = try ReviewCommand.plainly { try ReviewService.annotator(nil, environment: environment) }
                return context.print("labelling as \(UntrustedText.sanitized(current))")
            }
            let path = try ReviewCommand.plainly { try ReviewService.rememberAnnotator(name, environment: environment) }
            context.print("labelling as \(UntrustedText.sanitized(name)) (kept in \(path))")
            if let override = environment["LOUPE_USER"], !override.isEmpty, override != name {
                context.print("LOUPE_USER is set to \(UntrustedText.sanitized(override)) and wins while it is")
            }
        }
    }

    static func service(_ context: CommandContext, access: WorkspaceAccess = .write) throws -> ReviewService {
        if let database = try context.session.postgresDatabase() { return ReviewService(database: database) }
        return ReviewService(workspace: try context.workspace(access: access))
    }

    /// Rubric, label-file and review errors are the user's to fix: say them plainly.
    static func plainly<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as SuiteError {
            throw CommandFailure(UntrustedText.sanitized(error.description))
        } catch let error as ReviewError {
            throw CommandFailure(UntrustedText.sanitized(error.description))
        } catch let error as EvalError {
            throw CommandFailure(error.description)
        }
    }

    struct QueueGroup: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "queue", abstract: "Create and list review queues.", subcommands: [Create.self, List.self])
    }

    struct Create: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "A queue: a rubric over the items a filter selects, shuffled with a seed.",
            discussion: """
                --from says what to review: "answers run:N [failed|passed|errors] [item:ID] [SCORER<X] [WORD…]" \
                (a run's answers, as the Evals panel filters them), "traces [FILTER]" (the Traces panel's \
                / filter: errors, model:NAME, since:2h, name:TEXT…), "steps [trace:ID] [kind:llm|tool] [errors] \
                [name:TEXT] [model:TEXT]", "sessions [WORD…]" or "hits record:N|run:N [k:K]" (a saved query's \
                or a retrieval run's top K hits, each a query and a chunk). --annotators assigns each item to \
                --overlap of them in turn; without it the queue is open to anyone. --versus RUN makes a \
                pairwise queue: each answer beside the same item's answer in RUN, sides drawn per item, judged \
                A (left), B (right) or tie with a reason (no --rubric); --forks does the same for each fork \
                among --from "traces …" beside the trace it was forked from.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue's name (one word).") var name: String
        @Option(help: "The rubric file (YAML).") var rubric: String?
        @Option(help: "What to review (see below).") var from: String
        @Option(help: "Pairwise: the run whose answers are set beside these.") var versus: Int64?
        @Flag(help: "Pairwise: each fork among the traces beside the trace it was forked from.") var forks = false
        @Option(help: "Annotators, comma-separated.") var annotators: String?
        @Option(help: "Annotators per item (for agreement between people).") var overlap = 1
        @Option(help: "Shuffle seed.") var seed: UInt64 = 0x5EED
        @Option(help: "Keep the first N items after shuffling.") var limit: Int?
        @Option(name: .customLong("as"), help: "Who creates it (default LOUPE_USER).") var user: String?

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context)
            var request = ReviewService.QueueRequest(
                name: name, rubricPath: rubric, source: from,
                createdBy: try ReviewCommand.plainly { try ReviewService.annotator(user) })
            for name in (annotators ?? "").split(separator: ",") {
                request.annotators.append(
                    try ReviewCommand.plainly { try ReviewService.annotator(String(name), environment: [:]) })
            }
            request.overlap = overlap
            request.seed = seed
            request.versus = versus
            request.forks = forks
            if let limit, limit < 1 { throw CommandFailure("--limit must be at least 1") }
            request.limit = limit
            let queue = try ReviewCommand.plainly { try service.createQueue(request) }
            let progress = try service.progress(queue)
            context.print(
                "queue \(queue.id) \(queue.name): \(Formatting.count(progress.items, "item")) "
                    + "(\(queue.record.target)s) against rubric \(UntrustedText.sanitized(queue.rubric.name)) "
                    + "v\(queue.rubric.version) [\(queue.record.rubricHash)], seed \(seed)"
                    + (request.annotators.isEmpty
                        ? ", open to anyone"
                        : ", assigned to \(request.annotators.joined(separator: ", ")) ×\(overlap)"))
            context.print("criteria: " + ReviewCommand.criteriaLine(queue.rubric))
        }
    }

    static func criteriaLine(_ rubric: Rubric) -> String {
        rubric.criteria.map { criterion in
            let name = UntrustedText.sanitized(criterion.name)
            switch criterion.kind {
            case .categorical(let options):
                let shown: [String] = options.map { option in
                    UntrustedText.sanitized("\(option.name)[\(option.key)]") + (option.passes ? "✓" : "")
                }
                return name + " {" + shown.joined(separator: " ") + "}"
            case .numeric(let lower, let upper, let step, let passAt):
                var said = name + " \(Rubric.Criterion.shown(lower))…\(Rubric.Criterion.shown(upper))"
                if step != 1 { said += " step \(Rubric.Criterion.shown(step))" }
                if let passAt { said += " (pass ≥ \(Rubric.Criterion.shown(passAt)))" }
                return said
            case .boolean(let trueKey, let falseKey):
                return name + " {true[\(UntrustedText.sanitized(trueKey))] false[\(UntrustedText.sanitized(falseKey))]}"
            case .text: return name + " (note)"
            }
        }.joined(separator: " · ")
    }

    struct List: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Every review queue with its progress.")

        @OptionGroup var global: GlobalOptions

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context, access: .read)
            let queues = try ReviewCommand.plainly { try service.queues() }
            guard !queues.isEmpty else {
                return context.print("no review queues yet: loupe review queue create NAME --rubric R --from …")
            }
            context.print("  id  queue                 rubric                 target    items  labelled  shared  from")
            for queue in queues {
                let progress = try service.progress(queue)
                context.print(
                    String(format: "%4lld  ", queue.id)
                        + TextWidth.truncate(UntrustedText.sanitized(queue.name), toColumns: 20).padded(to: 20) + "  "
                        + TextWidth.truncate(
                            UntrustedText.sanitized("\(queue.rubric.name) v\(queue.rubric.version)"), toColumns: 21
                        ).padded(to: 21) + "  " + queue.record.target.padded(to: 8)
                        + String(progress.items).leftPadded(to: 6) + String(progress.labelled).leftPadded(to: 10)
                        + String(progress.shared).leftPadded(to: 8) + "  "
                        + TextWidth.truncate(UntrustedText.sanitized(queue.record.source), toColumns: 30))
            }
        }
    }

    /// An item as text: what it is, the input, the answer, the targets and scores.
    static func describe(_ item: ReviewService.Item, queue: ReviewService.Queue, width: Int) -> [String] {
        var lines = ["item \(item.position) · \(UntrustedText.sanitized(item.key))"]
        // A stored column that did not read back: the item shows without it, and says which.
        lines += item.unreadable.map { "⚠ " + UntrustedText.sanitized($0.description) }
        func wrapped(_ label: String, _ text: String) {
            let clean = UntrustedText.sanitized(text.replacingOccurrences(of: "\n", with: " "))
            lines.append(label.padded(to: 9) + TextWidth.truncate(clean, toColumns: max(20, width - 9)))
        }
        if let pair = item.pair {
            wrapped("input", pair.left.result.input)
            if !pair.left.targets.isEmpty { wrapped("target", pair.left.targets.joined(separator: " | ")) }
            wrapped("A", pair.left.shownOutput)
            wrapped("B", pair.right.shownOutput)
        } else if let row = item.answer {
            wrapped("input", row.result.input)
            wrapped("answer", row.shownOutput)
            if !row.targets.isEmpty { wrapped("target", row.targets.joined(separator: " | ")) }
            wrapped(
                "scores",
                row.scores.map { score in
                    "\(score.scorer) " + String(format: "%.3f", score.value)
                        + (score.passed.map { $0 ? " ✓" : " ✗" } ?? "")
                }.joined(separator: "  "))
            if let trace = row.result.traceID { lines.append("trace    \(trace) (loupe trace show \(trace))") }
        } else if let step = item.step {
            let span = step.span
            wrapped(
                "step",
                "\(step.index) of \(step.count) in trace \(step.traceID) \(step.traceName) · \(span.kind.rawValue) \(span.name)"
                    + (span.model.map { " · " + $0 } ?? "") + (span.status.isError ? " · error" : ""))
            if let last = span.input.last { wrapped("in", "\(last.role): \(last.text)") }
            if let tool = span.tool { wrapped("call", "\(tool.name)(\(tool.arguments))") }
            if let output = span.output.last { wrapped("out", "\(output.role): \(output.text)") }
        } else if let session = item.session {
            wrapped(
                "session", "\(session.id) · \(Formatting.count(session.turns.count, "turn")) · \(session.steps) steps")
            for turn in session.turns.prefix(5) { wrapped("turn", "trace \(turn.id) \(turn.name)") }
        } else if let hit = item.hit {
            wrapped("query", hit.query)
            wrapped(
                "hit",
                "rank \(hit.hit.rank) · \(hit.retriever) · document \(hit.hit.documentID)#\(hit.hit.ordinal) "
                    + hit.hit.shownTitle)
            wrapped("chunk", hit.hit.text)
            if !hit.hit.matchedTerms.isEmpty { wrapped("terms", hit.hit.matchedTerms.joined(separator: " ")) }
        } else if let trace = item.trace {
            wrapped("trace", "\(trace.id) \(trace.name) · \(trace.format) · \(trace.spanCount) spans")
        }
        for label in item.labels {
            wrapped("label", "\(label.annotator): \(label.criterion)=\(label.value)")
        }
        return lines
    }

    struct Next: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "The next item for an annotator, with its context (what the Review view shows).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue (name or id).") var queue: String
        @Option(name: .customLong("as"), help: "The annotator (default LOUPE_USER).") var user: String?

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context, access: .read)
            let annotator = try ReviewCommand.plainly { try ReviewService.annotator(user) }
            let queue = try ReviewCommand.plainly { try service.queue(self.queue) }
            guard let item = try service.next(queue, annotator: annotator) else {
                return context.print("\(annotator) has labelled every item of \(queue.name) assigned to them")
            }
            for line in ReviewCommand.describe(item, queue: queue, width: context.columns) { context.print(line) }
            context.print("criteria: " + ReviewCommand.criteriaLine(queue.rubric))
        }
    }

    struct Label: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Label an item: criterion=value pairs (an option's name or key, a number, true/false, a note).",
            discussion: """
                Without --item, the annotator's next item is labelled. All pairs are stored together, or \
                none when one is wrong.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue (name or id).") var queue: String
        @Argument(help: "criterion=value pairs.") var values: [String]
        @Option(help: "The item's key (default: the annotator's next item).") var item: String?
        @Option(name: .customLong("as"), help: "The annotator (default LOUPE_USER).") var user: String?

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context)
            let annotator = try ReviewCommand.plainly { try ReviewService.annotator(user) }
            let queue = try ReviewCommand.plainly { try service.queue(self.queue) }
            let pairs = try values.map { pair -> (criterion: String, text: String) in
                guard let equals = pair.firstIndex(of: "=") else {
                    throw CommandFailure("'\(UntrustedText.sanitized(pair))': write criterion=value")
                }
                return (String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
            }
            let key: String
            if let item {
                key = item
            } else {
                guard let next = try service.next(queue, annotator: annotator) else {
                    throw CommandFailure("\(annotator) has no item left in \(queue.name)")
                }
                key = next.key
            }
            let labels = try ReviewCommand.plainly {
                try service.label(queue, key: key, annotator: annotator, values: pairs)
            }
            let progress = try service.progress(queue)
            let mine = progress.annotators.first { $0.name == annotator }
            context.print(
                "\(annotator) · \(UntrustedText.sanitized(key)): "
                    + labels.map { UntrustedText.sanitized("\($0.criterion)=\($0.value)") }.joined(separator: " ")
                    + (mine.map { " · \($0.finished)/\($0.assigned) done" } ?? ""))
        }
    }

    struct Skip: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Skip the annotator's next item (it comes back when the others are done).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue (name or id).") var queue: String
        @Option(help: "The item's key (default: the annotator's next item).") var item: String?
        @Option(name: .customLong("as"), help: "The annotator (default LOUPE_USER).") var user: String?

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context)
            let annotator = try ReviewCommand.plainly { try ReviewService.annotator(user) }
            let queue = try ReviewCommand.plainly { try service.queue(self.queue) }
            let key: String
            if let item {
                key = try ReviewCommand.plainly { try service.item(queue, key: item) }.key
            } else {
                guard let next = try service.next(queue, annotator: annotator) else {
                    throw CommandFailure("\(annotator) has no item left in \(queue.name)")
                }
                key = next.key
            }
            try service.skip(queue, key: key, annotator: annotator)
            context.print("\(annotator) skipped \(UntrustedText.sanitized(key))")
        }
    }

    struct Undo: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "Remove the annotator's last label in a queue.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue (name or id).") var queue: String
        @Option(name: .customLong("as"), help: "The annotator (default LOUPE_USER).") var user: String?

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context)
            let annotator = try ReviewCommand.plainly { try ReviewService.annotator(user) }
            let queue = try ReviewCommand.plainly { try service.queue(self.queue) }
            guard let undone = try service.undo(queue, annotator: annotator) else {
                return context.print("\(annotator) has no label in \(queue.name) to undo")
            }
            context.print(
                "removed \(annotator)'s "
                    + UntrustedText.sanitized("\(undone.criterion)=\(undone.value) on \(undone.itemKey)"))
        }
    }

    struct Progress: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "A queue's progress per annotator and the agreement between people so far.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue (name or id).") var queue: String

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context, access: .read)
            let queue = try ReviewCommand.plainly { try service.queue(self.queue) }
            let progress = try service.progress(queue)
            context.print(
                "\(queue.name): \(progress.labelled)/\(progress.items) items labelled, \(progress.shared) by two or more"
                    + (progress.agreement.map {
                        String(format: ", people agree on %.0f%%", $0 * 100)
                            + " (\(UntrustedText.sanitized(progress.agreementCriterion ?? "")))"
                    } ?? ""))
            for annotator in progress.annotators {
                context.print(
                    "  " + UntrustedText.sanitized(annotator.name).padded(to: 16)
                        + "\(annotator.finished)/\(annotator.assigned)".leftPadded(to: 8)
                        + (annotator.skipped > 0 ? "  (\(annotator.skipped) skipped)" : ""))
            }
        }
    }

    struct Compare: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Head to head from pairwise queues: win rates with intervals, Bradley–Terry strengths.",
            discussion: """
                Each annotator's verdict is a game between the two runs (a tie is half a win each). Win \
                rates carry Wilson 95% intervals; with three or more runs (several queues) the Bradley–Terry \
                strengths say how the runs rank, and P(row beats column) follows from them.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "Pairwise queues (names or ids).") var queues: [String]

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context, access: .read)
            let report = try ReviewCommand.plainly { try service.pairwise(queues: queues) }
            context.print(
                "\(Formatting.count(report.games, "verdict")) between \(Formatting.count(report.systems.count, "run"))"
                    + (report.unreadable > 0 ? " (\(report.unreadable) left out: their answers are gone)" : ""))
            for problem in report.damaged {
                context.print("⚠ verdict left out: " + UntrustedText.sanitized(problem.description))
            }
            guard !report.winRates.isEmpty else { return }
            context.print(
                "system                          over                            W/T/L        win rate   95% interval")
            for rate in report.winRates {
                context.print(
                    TextWidth.truncate(UntrustedText.sanitized(rate.system), toColumns: 30).padded(to: 30) + "  "
                        + TextWidth.truncate(UntrustedText.sanitized(rate.opponent), toColumns: 30).padded(to: 30)
                        + "  "
                        + "\(rate.wins)/\(rate.ties)/\(rate.losses)".padded(to: 11)
                        + String(format: "  %7.3f   [%.3f, %.3f]", rate.rate.estimate, rate.rate.lower, rate.rate.upper)
                )
            }
            if let bt = report.bradleyTerry {
                guard bt.converged else {
                    return context.print(
                        "Bradley–Terry: no finite strengths (a run never won or tied against the others)")
                }
                context.print("Bradley–Terry strengths (log scale, mean 0):")
                for (system, strength) in zip(bt.systems, bt.strengths).sorted(by: { $0.1 > $1.1 }) {
                    context.print(
                        "  " + TextWidth.truncate(UntrustedText.sanitized(system), toColumns: 30).padded(to: 30)
                            + String(format: " %+.3f", strength))
                }
            }
        }
    }

    struct Export: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a queue's labels as JSON Lines or CSV (one row per item, criterion and annotator).")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue (name or id).") var queue: String
        @Option(help: "jsonl or csv.") var format = "jsonl"
        @Option(name: .shortAndLong, help: "Write here instead of standard output.") var output: String?

        func run(in context: CommandContext) throws {
            guard let format = ReviewService.ExportFormat(rawValue: format.lowercased()) else {
                throw CommandFailure("--format \(format): use jsonl or csv")
            }
            let service = try ReviewCommand.service(context, access: .read)
            let queue = try ReviewCommand.plainly { try service.queue(self.queue) }
            let text = try service.export(queue, format: format)
            guard let output else {
                for line in text.split(separator: "\n") { context.print(UntrustedText.sanitized(String(line))) }
                return
            }
            try text.write(toFile: output, atomically: true, encoding: .utf8)
            context.print("wrote \(queue.name)'s labels as \(format.rawValue) to \(output)")
        }
    }

    struct Import: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read labels made elsewhere: JSON Lines of item, criterion, value and annotator.",
            discussion: """
                A line's queue field, when there is one, must name this queue (or the queue given with \
                --from-queue). A later line for the same item, criterion and annotator replaces an earlier \
                one, as does a line for a label the queue already holds; the count says how many did.
                """)

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The queue (name or id).") var queue: String
        @Argument(help: "The JSON Lines file.") var file: String
        @Option(help: "Accept lines exported from this other queue (their queue field).") var fromQueue: String?

        func run(in context: CommandContext) throws {
            let service = try ReviewCommand.service(context)
            let queue = try ReviewCommand.plainly { try service.queue(self.queue) }
            let report = try ReviewCommand.plainly { try service.importLabels(queue, file: file, from: fromQueue) }
            context.print(
                "imported \(Formatting.count(report.labels, "label")) into \(queue.name)"
                    + (report.replaced > 0 ? ", \(report.replaced) replaced" : ""))
        }
    }
}
