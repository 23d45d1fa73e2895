import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupePostgres
import LoupeStore

extension EvalCommand {
    struct Worker: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer the items of runs queued with eval run --workers, leasing them from the workspace.",
            discussion: """
                Start as many as you like, on any machines that reach the workspace (a PostgreSQL URL, or \
                one SQLite file for workers on one machine). Each leases an item, answers and scores it, and \
                stores the answer in its own transaction; a killed worker's items go back to the others once \
                their lease runs out (--lease). Nothing is scored twice. The worker that stores a run's last \
                answer marks it complete with its statistics. It stops when no running run has an item left \
                (--follow: it waits for new runs until stopped).
                """)

        @OptionGroup var global: GlobalOptions
        // An argument, as `eval show RUN` takes it: the TUI's own `--run` would take an option's value.
        @Argument(help: "Only this run's items (default: any running run's, oldest first).") var run: Int64?
        @Option(help: "Items answered at once.") var concurrency = 8
        @Option(help: "Seconds an item stays leased without word from its worker.") var lease = 60.0
        @Option(help: "The name stored with its answers (default: host:pid).") var name: String?
        @Flag(help: "Wait for new runs when there is nothing to answer.") var follow = false
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            guard concurrency >= 1 else { throw CommandFailure("--concurrency must be at least 1") }
            guard lease >= 1 else { throw CommandFailure("--lease must be at least 1 second") }
            var options = EvalService.WorkOptions()
            options.run = run
            options.concurrency = concurrency
            options.leaseSeconds = lease
            options.follow = follow
            if let name {
                guard !name.isEmpty, name.count <= 200 else {
                    throw CommandFailure("--name must be 1 to 200 characters")
                }
                options.worker = name
            }
            // Said on stderr while the workspace is away (a server restarting), so that --json's
            // output stays JSON: the worker waits and stores nothing meanwhile.
            options.waiting = { [worker = options.worker] message in
                let line = "loupe eval worker \(UntrustedText.sanitized(worker)): \(UntrustedText.sanitized(message))"
                if context.isInsideTUI { return context.print(line) }
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            // A worker started while the server is away (restarting, or not up yet when a fleet of
            // workers starts) waits for it as a running worker does, rather than failing at once.
            let starting = WorkspaceWait(seconds: options.reconnectSeconds, waiting: options.waiting)
            let service = try starting.retrying { try EvalCommand.service(context) }
            // On PostgreSQL an idle worker sleeps until the workspace announces a change.
            let watcher = context.session.isPostgres ? try PostgresWatcher(url: PostgresURL(context.session.path)) : nil
            defer { watcher?.stop() }
            if let watcher { options.announced = { watcher.notices } }
            if let run, try starting.retrying({ try service.evals.evalRun(run) }) == nil {
                throw CommandFailure("there is no eval run \(run)")
            }
            let outcome = try EvalCommand.plainly {
                // Answers still being made past the grace period are abandoned: their items go back
                // to the other workers now rather than when their lease runs out.
                try Interrupt.cancellable(
                    context, work: "answers were being made",
                    abandoning: { [evals = service.evals, worker = options.worker] in
                        try? evals.releaseEvalLeases(worker: worker)
                    }
                ) {
                    try service.work(options, reporter: context.reporter)
                }
            }
            let rate = outcome.seconds > 0 ? Double(outcome.answered) / outcome.seconds : 0
            if json {
                return context.print(
                    JSONValue.object([
                        "worker": .string(options.worker), "answered": .number(Double(outcome.answered)),
                        "errors": .number(Double(outcome.errors)), "seconds": .number(outcome.seconds),
                        "answers_per_second": .number(rate),
                        "completed_runs": .array(outcome.completed.map { .number(Double($0)) }),
                    ]).prettyJSON)
            }
            context.print(
                "worker \(UntrustedText.sanitized(options.worker)): \(Formatting.count(outcome.answered, "answer")) "
                    + "(\(Formatting.count(outcome.errors, "error"))) in "
                    + String(format: "%.1f s, %.1f answers/s", outcome.seconds, rate))
            for completed in outcome.completed {
                context.print("run \(completed) complete: loupe eval show \(completed)")
            }
        }
    }

    /// The workers of a run queued for them, as `eval show` lists them.
    static func printWorkers(_ listing: EvalService.RunListing, _ context: CommandContext) {
        guard let progress = listing.work else { return }
        context.print(
            "workers: \(listing.workers.count) · \(progress.done)/\(progress.total) answered · "
                + "\(progress.inFlight) in flight · \(progress.waiting) waiting")
        guard !listing.workers.isEmpty else { return }
        context.print("  worker                          answered  in flight  answers/s  idle")
        for worker in listing.workers {
            context.print(
                "  " + TextWidth.truncate(UntrustedText.sanitized(worker.worker), toColumns: 30).padded(to: 30)
                    + String(format: "  %8d  %9d  ", worker.answered, worker.inFlight)
                    + (worker.answersPerSecond.map { String(format: "%9.1f", $0) } ?? "        —")
                    + String(format: "  %.0fs", worker.idleSeconds))
        }
    }
}
