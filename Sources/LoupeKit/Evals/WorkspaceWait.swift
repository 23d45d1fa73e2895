import Foundation
import LoupeBase
import LoupeStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How an eval worker waits for a workspace it cannot reach (a PostgreSQL server restarting):
/// a statement that may run twice (a lease, an answer stored first-wins, a trace, a read) is tried
/// again with a growing pause, up to a limit. The first failure of an outage is said once for all
/// the worker's threads, and so is the workspace's return.
package final class WorkspaceWait: Sendable {
    /// How long one statement keeps being tried.
    package let seconds: Double
    private let waiting: (@Sendable (String) -> Void)?
    /// Whether an outage has been said and its end not yet.
    private let away = Mutex(false)

    package init(seconds: Double, waiting: (@Sendable (String) -> Void)? = nil) {
        self.seconds = seconds
        self.waiting = waiting
    }

    /// `body`, tried again while the workspace is unreachable, for up to ``seconds``.
    ///
    /// - Throws: ``WorkspaceUnavailable`` when it stayed unreachable past the limit; any other
    ///   error of `body` at once.
    package func retrying<T>(_ body: () throws -> T) throws -> T {
        let deadline = Date().addingTimeInterval(seconds)
        var pause: UInt32 = 100_000
        while true {
            do {
                let value = try body()
                if away.withLock({ away in
                    defer { away = false }
                    return away
                }) {
                    waiting?("the workspace is back; carrying on")
                }
                return value
            } catch let error as WorkspaceError where error.code == .unreachable {
                if away.withLock({ away in
                    defer { away = true }
                    return !away
                }) {
                    waiting?(
                        "\(error.description) Waiting up to \(Int(seconds)) s for it; nothing is stored meanwhile.")
                }
                guard Date() < deadline else { throw WorkspaceUnavailable(error: error, seconds: seconds) }
                usleep(pause)
                pause = min(pause * 2, 2_000_000)
            }
        }
    }
}

/// The workspace stayed unreachable past the worker's limit: the worker stops, storing nothing for
/// the items it was answering; they go back to the queue when their leases run out.
package struct WorkspaceUnavailable: UserFacingError, Sendable {
    package var error: WorkspaceError
    package var seconds: Double

    package var description: String {
        "\(error.description) Still unreachable after \(Int(seconds)) s: stopping without storing the answers "
            + "being made; their items go back to the queue when their leases run out."
    }
}

extension EvalService {
    /// Whether `error` is the workspace's (it cannot be reached, is busy, refused a statement),
    /// not the target's: such an error is never stored as an answer.
    static func isWorkspaceError(_ error: any Error) -> Bool {
        error is WorkspaceError || error is WorkspaceUnavailable
    }
}
