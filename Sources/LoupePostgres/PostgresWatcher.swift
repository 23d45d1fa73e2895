import Foundation
import LoupeStore
import NIOCore
import PostgresNIO
import Synchronization

/// Tells when a PostgreSQL workspace changed under an open view, and whether the server can be
/// reached: PostgreSQL's side of DESIGN.md §7's change notifications, as ``WorkspaceWatcher`` is
/// SQLite's.
///
/// Every workspace table announces its commits on ``PostgresStore/changesChannel`` (the triggers
/// ``PostgresStore/open(_:connectTimeout:)`` installs); the watcher `LISTEN`s on a connection of
/// its own, so a view learns of another machine's new trace, answer or label without reading
/// the database until something changed. When that connection drops (the server stopped or
/// restarted) the watcher says so and connects again every ``retryInterval`` without blocking
/// its caller. Each time its `LISTEN` is confirmed, the first time too, it reports one change:
/// what committed before that (since the view's first read, or while the server was away) was
/// never announced.
///
/// Thread-safety: any thread. Its work happens on NIO's event loop; ``changed()`` and
/// ``trouble`` only read what that work left.
package final class PostgresWatcher: ChangeWatcher {
    private struct State {
        var connection: PostgresConnection?
        /// A notice (or a reconnection) came since ``changed()`` last answered.
        var pending = false
        /// Why the server cannot be reached; nil while the connection is up.
        var trouble: String?
        var stopped = false
        /// Notices received: what an idle eval worker waits to see grow.
        var notices = 0
    }

    package let url: PostgresURL
    private let state = Mutex(State())
    /// Seconds between attempts to connect again.
    package static let retryInterval = 2.0

    /// Starts listening on `url`; returns at once, the connection comes up on the event loop.
    package init(url: PostgresURL) {
        self.url = url
        connect()
    }

    deinit { stop() }

    /// True when a change was announced (or the connection came back) since the last call.
    package func changed() -> Bool {
        state.withLock { state in
            defer { state.pending = false }
            return state.pending
        }
    }

    /// Why the workspace cannot be reached right now ("connection refused; retrying"), nil while
    /// it can (or before the first attempt finished).
    package var trouble: String? { state.withLock { $0.trouble } }

    /// Whether the watcher's connection is up and listening.
    package var isListening: Bool { state.withLock { $0.connection != nil && $0.trouble == nil } }

    /// Notices received so far.
    package var notices: Int { state.withLock { $0.notices } }

    /// Closes the connection and stops connecting again.
    package func stop() {
        let connection = state.withLock { state -> PostgresConnection? in
            state.stopped = true
            defer { state.connection = nil }
            return state.connection
        }
        connection.map(Self.close)
    }

    private func connect() {
        guard !state.withLock({ $0.stopped }) else { return }
        PostgresStore.connecting(url, connectTimeout: Self.retryInterval * 2).whenComplete { [weak self] result in
            guard let self else {
                if case .success(let connection) = result { Self.close(connection) }
                return
            }
            switch result {
            case .success(let connection):
                self.listen(on: connection)
            case .failure(let error):
                let translated = PostgresStore.translate(error, url: self.url, connecting: true)
                self.lost(because: Self.brief(translated.message) + " · retrying")
            }
        }
    }

    private func listen(on connection: PostgresConnection) {
        connection.addListener(channel: PostgresStore.changesChannel) { [weak self] _, _ in
            self?.state.withLock { state in
                state.pending = true
                state.notices += 1
            }
        }
        // addListener sends LISTEN without waiting for it: a query after it on the same
        // connection answers only once the server has it, so from then on no commit is missed.
        // The query asks the server which channels this session listens to.
        let confirmed = connection.query(
            PostgresQuery(
                unsafeSQL:
                    "SELECT 1 AS listening FROM pg_listening_channels() AS channel WHERE channel = '\(PostgresStore.changesChannel)'"
            ), logger: PostgresStore.logger)
        confirmed.whenComplete { [weak self] result in
            guard let self else {
                Self.close(connection)
                return
            }
            switch result {
            case .failure(let error):
                Self.close(connection)
                let translated = PostgresStore.translate(error, url: self.url, connecting: true)
                self.lost(because: Self.brief(translated.message) + " · retrying")
                return
            case .success(let answer) where answer.rows.isEmpty:
                Self.close(connection)
                self.lost(because: "LISTEN \(PostgresStore.changesChannel) did not take effect · retrying")
                return
            case .success:
                break
            }
            let stopped = self.state.withLock { state -> Bool in
                guard !state.stopped else { return true }
                state.connection = connection
                // What committed before LISTEN took effect (since the caller's first read, or
                // while the server was away) was not announced: read once more.
                state.pending = true
                state.trouble = nil
                return false
            }
            if stopped {
                Self.close(connection)
                return
            }
            connection.closeFuture.whenComplete { [weak self] _ in
                self?.lost(because: "connection lost · retrying")
            }
        }
    }

    /// An error's message as short as a status bar beside the URL needs: "unreachable
    /// (connection refused)", else its first sentence.
    static func brief(_ message: String) -> String {
        if let open = message.firstIndex(of: "("), let close = message[open...].firstIndex(of: ")") {
            return "unreachable " + message[open...close]
        }
        if let stop = message.range(of: ". ") { return String(message[..<stop.lowerBound]) }
        return message
    }

    private static func close(_ connection: PostgresConnection) {
        // postgres-nio requires a connection closed before it goes: it is kept until it is.
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    private func lost(because reason: String) {
        let retry = state.withLock { state -> Bool in
            state.connection = nil
            guard !state.stopped else { return false }
            state.trouble = reason
            return true
        }
        guard retry else { return }
        MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: .milliseconds(Int64(Self.retryInterval * 1000))) {
            [weak self] in
            self?.connect()
        }
    }
}
