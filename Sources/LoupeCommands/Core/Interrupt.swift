import Foundation
import LoupeKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// SIGINT and SIGTERM turned into a cancellation of a running job while it runs; the process's
/// previous handlers come back after it.
enum Interrupt {
    /// The signal that arrived (0: none yet); stays set after the run so the command can exit
    /// with 128 + its number.
    private static let received = Atomic<Int32>(0)
    private static let last = Atomic<Int32>(0)
    /// Seconds the work has to reach its next cancellation check after a signal.
    static let graceSeconds = 1.0

    /// The signal that cancelled the last run, nil when none did.
    static var lastSignal: Int32? {
        let number = last.load(ordering: .relaxed)
        return number == 0 ? nil : number
    }

    /// Unblocks SIGINT and SIGTERM: a launcher (a test harness, a supervisor) may have left them
    /// blocked in the mask this process inherited, and then they would never arrive.
    static func unblockTerminationSignals() {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// Runs `body` under ``cancelling(_:work:)`` when the command runs from the shell; inside the
    /// TUI, whose job runner cancels jobs itself and owns the signals, it runs as it is.
    ///
    /// - Parameter abandoning: what to do before the process ends with work still under way
    ///   (give back what it holds), on the watcher's thread.
    static func cancellable<T>(
        _ context: CommandContext, work: String = "an answer was being made",
        advice: String = "run the same command again to resume",
        abandoning: @escaping @Sendable () -> Void = {}, _ body: () throws -> T
    ) throws -> T {
        if context.isInsideTUI { return try body() }
        return try cancelling(context.reporter, work: work, advice: advice, abandoning: abandoning)(body)
    }

    /// - Parameter work: what is abandoned when the work has not stopped a second after the
    ///   signal ("an answer was being made"), for the message.
    /// - Parameter advice: what to do then, for the message.
    static func cancelling<T>(
        _ reporter: JobReporter, work: String = "an answer was being made",
        advice: String = "run the same command again to resume",
        abandoning: @escaping @Sendable () -> Void = {}
    ) -> (() throws -> T) throws -> T {
        { body in
            received.store(0, ordering: .relaxed)
            last.store(0, ordering: .relaxed)
            let previous = [SIGINT, SIGTERM].map { number in
                (
                    number,
                    signal(number) { number in
                        Interrupt.received.store(number, ordering: .relaxed)
                        Interrupt.last.store(number, ordering: .relaxed)
                    }
                )
            }
            unblockTerminationSignals()
            let finished = Atomic<Bool>(false)
            let watcher = Thread {
                var cancelledAt: Date?
                while !finished.load(ordering: .relaxed) {
                    if received.exchange(0, ordering: .relaxed) != 0 {
                        reporter.cancel()
                        cancelledAt = cancelledAt ?? Date()
                    }
                    // The work stops at its next check; an answer still being made after the grace
                    // period (a long model call or tool) is abandoned: the process ends as a kill
                    // would, which loses nothing stored (each answer is one transaction) and
                    // leaves the run's lease to a dead pid, so `eval list` shows it interrupted
                    // and the same command resumes it.
                    if let cancelledAt, Date().timeIntervalSince(cancelledAt) >= graceSeconds,
                        !finished.load(ordering: .relaxed)
                    {
                        let number = last.load(ordering: .relaxed)
                        let name = number == SIGTERM ? "SIGTERM" : "SIGINT"
                        let line =
                            "error: stopped by \(name) while \(work); "
                            + advice + "\n"
                        abandoning()
                        _ = line.withCString { write(2, $0, strlen($0)) }
                        _exit(128 + number)
                    }
                    usleep(20_000)
                }
            }
            watcher.start()
            defer {
                finished.store(true, ordering: .relaxed)
                for (number, handler) in previous { signal(number, handler) }
            }
            return try body()
        }
    }
}
