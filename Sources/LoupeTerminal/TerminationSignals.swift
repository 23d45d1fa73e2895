import Glibc
import Synchronization

/// SIGTERM, SIGINT and SIGHUP turned into a flag the UI loop polls, so the loop leaves through
/// its normal exit path and restores the terminal.
package enum TerminationSignals {
    private static let received = Atomic<Int32>(0)
    private static let last = Atomic<Int32>(0)

    /// Installs the handlers (idempotent) and unblocks the signals, which a launcher may have
    /// left blocked in the mask the process inherited.
    package static func install() {
        var unblock = sigset_t()
        sigemptyset(&unblock)
        for signal in [SIGTERM, SIGINT, SIGHUP] {
            Glibc.signal(signal) { number in
                TerminationSignals.received.store(number, ordering: .relaxed)
                TerminationSignals.last.store(number, ordering: .relaxed)
            }
            sigaddset(&unblock, signal)
        }
        pthread_sigmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// The signal that arrived since the last call, if any.
    package static func take() -> Int32? {
        let value = received.exchange(0, ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// The last signal that arrived since ``install()``, kept after ``take()``: the process exits
    /// with 128 + its number once the terminal is restored, as shells expect of a killed program.
    package static var lastReceived: Int32? {
        let value = last.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }
}
