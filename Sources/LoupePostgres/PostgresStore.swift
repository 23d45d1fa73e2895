import Foundation
import Logging
import LoupeStore
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// A workspace on PostgreSQL through postgres-nio, used as Loupe uses SQLite — statements with
/// `?` placeholders, a transaction per multi-row write, the schema brought forward under an
/// advisory lock when it is opened.
///
/// Calls block their thread until the server answers (the connections run on NIO's shared event
/// loop), so commands and panels call it as they call ``Workspace``. Each statement or
/// transaction takes a connection of its own from a pool that grows, up to ``maxConnections``,
/// only while calls overlap: a command uses one, while an eval worker's threads each commit their
/// answers without waiting for each other's round trips.
///
/// Thread-safety: all methods may be called from any thread, but never from the event loop.
package final class PostgresStore: Sendable {
    package let url: PostgresURL
    /// The most connections open at once; a call beyond them waits for one to be free.
    package let maxConnections: Int
    /// Connections not in use; a dropped one is replaced when it is next taken.
    private let idle: Mutex<[PostgresConnection]>
    /// One permit per connection that may be in use.
    private let permits: DispatchSemaphore
    private let connectTimeout: Double

    /// PostgreSQL's advisory lock key under which schemas are brought forward ("LOUP").
    static let migrationLock: Int64 = 0x4C4F_5550
    /// The migrations applied, by name: SQLite's migration names, so that both backends count
    /// the same versions.
    static let migrationsTable = "loupe_migrations"

    static let logger = Logger(label: "loupe-postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    private init(url: PostgresURL, connection: PostgresConnection, connectTimeout: Double, maxConnections: Int) {
        self.url = url
        self.maxConnections = max(1, maxConnections)
        idle = Mutex([connection])
        permits = DispatchSemaphore(value: self.maxConnections)
        self.connectTimeout = connectTimeout
    }

    /// How many connections a store opens at most, unless told: as many as an eval worker's
    /// default threads, well under PostgreSQL's default `max_connections` (100) for a team.
    package static let defaultMaxConnections = 8

    /// Connects to `url` and brings its schema forward (creating the workspace's tables in an
    /// empty database).
    ///
    /// - Throws: ``WorkspaceError``: the server cannot be reached (`unreachable`), refuses the
    ///   credentials or the database does not exist (`inaccessible`), the database holds tables
    ///   of something else (`notAWorkspace`) or a newer Loupe's schema (`schemaTooNew`).
    package static func open(
        _ url: PostgresURL, connectTimeout: Double = 10, maxConnections: Int = defaultMaxConnections
    ) throws(WorkspaceError) -> PostgresStore {
        let store = try connect(url, connectTimeout: connectTimeout, maxConnections: maxConnections)
        do {
            try store.migrate()
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Connects to `url` without looking at its tables.
    package static func connect(
        _ url: PostgresURL, connectTimeout: Double = 10, maxConnections: Int = defaultMaxConnections
    ) throws(WorkspaceError) -> PostgresStore {
        PostgresStore(
            url: url, connection: try newConnection(url, connectTimeout: connectTimeout),
            connectTimeout: connectTimeout,
            maxConnections: maxConnections)
    }

    /// A new connection to `url`.
    private static func newConnection(_ url: PostgresURL, connectTimeout: Double) throws(WorkspaceError)
        -> PostgresConnection
    {
        do {
            return try connecting(url, connectTimeout: connectTimeout).wait()
        } catch let error as WorkspaceError {
            throw error
        } catch {
            throw translate(error, url: url, connecting: true)
        }
    }

    /// A connection to `url` under way, for callers that must not block (``PostgresWatcher``);
    /// fails with a ``WorkspaceError`` when TLS cannot be set up.
    static func connecting(_ url: PostgresURL, connectTimeout: Double) -> EventLoopFuture<PostgresConnection> {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let tls: PostgresConnection.Configuration.TLS
        do {
            switch url.sslMode {
            case .disable:
                tls = .disable
            case .prefer, .require:
                // libpq's prefer and require encrypt without checking the certificate.
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.certificateVerification = .none
                let context = try NIOSSLContext(configuration: configuration)
                tls = url.sslMode == .require ? .require(context) : .prefer(context)
            case .verifyFull:
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        } catch {
            return loop.makeFailedFuture(
                WorkspaceError(.inaccessible, path: url.description, message: "cannot set up TLS: \(error)"))
        }
        var configuration = PostgresConnection.Configuration(
            host: url.host, port: url.port, username: url.user, password: url.password, database: url.database,
            tls: tls)
        configuration.options.connectTimeout = .milliseconds(Int64(connectTimeout * 1000))
        return PostgresConnection.connect(on: loop, configuration: configuration, id: 1, logger: logger)
    }

    /// A store let go without ``close()`` closes its connection: postgres-nio requires it.
    deinit { close() }

    /// Closes the idle connections (every one, once no call is under way). Each close waits at
    /// most ``closeTimeout`` for the server's goodbye: a process that ends (an eval worker whose
    /// run is done) must not hang on a connection a restarted server left half-closed.
    package func close() {
        for connection in idle.withLock({ $0 }) {
            _ = try? Self.waiting(for: connection.close(), on: connection.eventLoop, timeout: Self.closeTimeout)
        }
    }

    /// How long ``close()`` waits for one connection to close.
    static let closeTimeout = TimeAmount.seconds(2)

    /// How many connections are open and not in use.
    package var idleConnections: Int { idle.withLock { $0.count } }

    /// Runs `body` on a connection of its own: an idle one, a new one while fewer than
    /// ``maxConnections`` are in use, else the first one given back. A connection the server
    /// dropped (it restarted) is replaced first, so a statement or transaction that starts
    /// afterwards runs, while the one under way when it dropped failed whole.
    private func withConnection<T>(_ body: (PostgresConnection) throws(WorkspaceError) -> T) throws(WorkspaceError)
        -> T
    {
        permits.wait()
        defer { permits.signal() }
        var connection = idle.withLock { $0.popLast() }
        if connection?.isClosed ?? true {
            connection = try Self.newConnection(url, connectTimeout: connectTimeout)
        }
        let taken = connection!
        defer { idle.withLock { $0.append(taken) } }
        return try body(taken)
    }

    /// Runs one statement and returns its rows and how many rows it changed.
    @discardableResult
    package func execute(_ sql: String, _ arguments: [SQLValue] = []) throws(WorkspaceError) -> [SQLRow] {
        try withConnection { connection throws(WorkspaceError) in try run(sql, arguments, on: connection).rows }
    }

    /// Runs `body` in one transaction on one connection: a throw rolls everything back.
    /// `begin` opens it (a read's asks for one snapshot for all its statements).
    @discardableResult
    package func transaction<T>(begin: String = "BEGIN", _ body: (Transaction) throws -> T) throws(WorkspaceError)
        -> T
    {
        try withConnection { connection throws(WorkspaceError) in
            // BEGIN is sent without waiting for its answer: the connection runs its queries in
            // the order they were sent, so the body's first statement follows it in the same
            // round trip (a worker stores each answer in two short transactions). Its answer is read
            // before COMMIT; a BEGIN that failed fails the transaction.
            let begun = connection.query(PostgresQuery(unsafeSQL: begin), logger: Self.logger)
            do {
                let result = try body(Transaction(store: self, connection: connection))
                do {
                    _ = try Self.waiting(for: begun, on: connection.eventLoop)
                } catch {
                    throw Self.translate(error, url: url, connecting: false)
                }
                _ = try run("COMMIT", [], on: connection)
                return result
            } catch {
                _ = try? Self.waiting(for: begun, on: connection.eventLoop)
                _ = try? run("ROLLBACK", [], on: connection)
                if let error = error as? WorkspaceError { throw error }
                throw WorkspaceError(.database, path: url.description, message: "\(error)")
            }
        }
    }

    /// Statements inside ``PostgresStore/transaction(_:)``, on its connection.
    package struct Transaction {
        fileprivate let store: PostgresStore
        fileprivate let connection: PostgresConnection

        /// Runs one statement and returns how many rows it inserted, updated or deleted.
        package func changes(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
            try store.run(sql, arguments, on: connection).changed
        }
    }

    /// One statement on `connection`, which the caller holds.
    fileprivate func run(_ sql: String, _ arguments: [SQLValue], on connection: PostgresConnection)
        throws(WorkspaceError) -> (rows: [SQLRow], changed: Int)
    {
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .null: bindings.appendNull()
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let text): bindings.append(text)
            case .blob(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        let query = PostgresQuery(unsafeSQL: Self.numberingPlaceholders(sql), binds: bindings)
        if connection.isClosed {
            throw Self.translate(ConnectionLost(), url: url, connecting: false)
        }
        let result: PostgresQueryResult
        do {
            result = try Self.waiting(for: connection.query(query, logger: Self.logger), on: connection.eventLoop)
        } catch {
            throw Self.translate(error, url: url, connecting: false)
        }
        var rows: [SQLRow] = []
        rows.reserveCapacity(result.rows.count)
        var columns: [String]?
        for row in result.rows {
            let names = columns ?? row.map(\.columnName)
            columns = names
            var values: [SQLValue] = []
            values.reserveCapacity(names.count)
            for cell in row { values.append(try Self.value(cell, url: url)) }
            rows.append(SQLRow(columns: names, values: values))
        }
        return (rows, result.metadata.rows ?? 0)
    }

    /// How long one statement may go unanswered before the connection counts as lost.
    static let statementTimeout = TimeAmount.seconds(600)

    /// `future`'s value, or `timeout` (``statementTimeout`` unless told) passing with no answer,
    /// whichever comes first: a connection the server dropped without a word must not hang a command.
    private static func waiting<T: Sendable>(
        for future: EventLoopFuture<T>, on loop: any EventLoop, timeout: TimeAmount = statementTimeout
    ) throws -> T {
        let promise = loop.makePromise(of: T.self)
        let settled = Mutex(false)
        @Sendable func settle(_ result: Result<T, any Error>) {
            guard
                settled.withLock({ done in
                    defer { done = true }
                    return !done
                })
            else { return }
            promise.completeWith(result)
        }
        future.whenComplete(settle)
        let timer = loop.scheduleTask(in: timeout) {
            settle(.failure(ConnectionLost()))
        }
        defer { timer.cancel() }
        return try promise.futureResult.wait()
    }

    /// `?` placeholders (outside quotes) as PostgreSQL's `$1`, `$2`, …: the workspace's queries
    /// are written once, with SQLite's placeholders.
    static func numberingPlaceholders(_ sql: String) -> String {
        // Byte by byte: the quotes and `?` are ASCII, which UTF-8 never uses inside a longer
        // character, and a statement of a thousand rows has twenty thousand placeholders.
        var output: [UInt8] = []
        output.reserveCapacity(sql.utf8.count + 16)
        var number = 0
        var quote: UInt8?
        for byte in sql.utf8 {
            if let open = quote {
                if byte == open { quote = nil }
                output.append(byte)
            } else if byte == UInt8(ascii: "'") || byte == UInt8(ascii: "\"") {
                quote = byte
                output.append(byte)
            } else if byte == UInt8(ascii: "?") {
                number += 1
                output.append(UInt8(ascii: "$"))
                output.append(contentsOf: String(number).utf8)
            } else {
                output.append(byte)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// A cell as the storage class the workspace's column maps onto. A cell that does not
    /// decode as its type says is an error naming its column, never a NULL: SQLite would have
    /// given the value, so a NULL here would be one backend's silent difference.
    private static func value(_ cell: PostgresCell, url: PostgresURL) throws(WorkspaceError) -> SQLValue {
        guard var bytes = cell.bytes else { return .null }
        do {
            switch cell.dataType {
            case .int2, .int4, .int8:
                return .integer(try cell.decode(Int64.self))
            case .oid:
                // postgres-nio decodes no integer from an OID: its four bytes, unsigned.
                guard bytes.readableBytes == 4, let oid = bytes.readInteger(as: UInt32.self) else {
                    throw PostgresDecodingError.Code.failure
                }
                return .integer(Int64(oid))
            case .float4, .float8:
                return .real(try cell.decode(Double.self))
            case .numeric:
                // postgres-nio reads NUMERIC (a SUM, a literal such as 0.5) as a Decimal, not a Double.
                return .real(NSDecimalNumber(decimal: try cell.decode(Decimal.self)).doubleValue)
            case .bool:
                return .integer(try cell.decode(Bool.self) ? 1 : 0)
            case .bytea:
                return .blob(Array(try cell.decode(ByteBuffer.self).readableBytesView))
            default:
                // Any other type reads as its text where it has one (a format probe: no Swift
                // type here stands for it), else as its bytes.
                if let text = try? cell.decode(String.self) { return .text(text) }
                return .blob(Array(bytes.readableBytesView))
            }
        } catch {
            throw WorkspaceError(
                .database, path: url.description,
                message: "column \(cell.columnName) (\(cell.dataType)) does not read back: \(error)")
        }
    }

    /// Says what went wrong so the user can act, naming the URL without its password.
    static func translate(_ error: any Error, url: PostgresURL, connecting: Bool) -> WorkspaceError {
        let shown = url.description
        let lost = WorkspaceError(
            .unreachable, path: shown,
            message: "the connection to \(url.host):\(url.port) was lost (the server stopped or restarted); "
                + "nothing of the unfinished transaction was kept. Run the command again once it is back.")
        if error is ConnectionLost { return lost }
        guard let error = error as? PSQLError else {
            if let error = error as? WorkspaceError { return error }
            return WorkspaceError(
                .unreachable, path: shown,
                message: "cannot reach \(url.host):\(url.port) (\(error)). Is PostgreSQL running there?")
        }
        let state = error.serverInfo?[.sqlState] ?? ""
        let message = error.serverInfo?[.message] ?? ""
        switch error.code {
        case .connectionError:
            let reason = error.underlying.map { "\($0)" } ?? "no answer"
            if reason.contains("CERTIFICATE") || reason.contains("handshake") {
                return WorkspaceError(
                    .inaccessible, path: shown,
                    message: "TLS with \(url.host) failed: the server's certificate is not trusted "
                        + "(sslmode=\(url.sslMode.rawValue) checks it against the system's roots and the host name; "
                        + "sslmode=require encrypts without checking)")
            }
            return WorkspaceError(
                .unreachable, path: shown,
                message: "cannot connect to \(url.host):\(url.port) (\(Self.shortReason(reason))). "
                    + "Is PostgreSQL running there and listening on that address?")
        case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
            return lost
        case .sslUnsupported:
            return WorkspaceError(
                .inaccessible, path: shown,
                message: "sslmode=\(url.sslMode.rawValue) asks for TLS, but the server does not offer it")
        case .authMechanismRequiresPassword:
            return WorkspaceError(
                .inaccessible, path: shown,
                message: "the server asks \(url.user) for a password: give it in the URL, PGPASSWORD or ~/.pgpass")
        case .unsupportedAuthMechanism, .saslError:
            return WorkspaceError(
                .inaccessible, path: shown, message: "authentication as \(url.user) failed (\(error.code))")
        default:
            break
        }
        switch state {
        case "28P01", "28000":
            return WorkspaceError(
                .inaccessible, path: shown,
                message: "the server refused \(url.user)'s credentials: \(message). Check the password (URL, "
                    + "PGPASSWORD or ~/.pgpass) and pg_hba.conf.")
        case "3D000":
            return WorkspaceError(
                .inaccessible, path: shown,
                message: "database \(url.database) does not exist: create it first (createdb \(url.database))")
        case "42501":
            return WorkspaceError(
                .inaccessible, path: shown, message: "\(url.user) may not do this: \(message) (ask for the privilege)")
        case "57P01", "57P02", "57P03":
            return WorkspaceError(
                .unreachable, path: shown,
                message: "the server is shutting down or starting up (\(message)); run the command again shortly")
        default:
            let detail = message.isEmpty ? "\(error.code)" : message
            return WorkspaceError(
                .database, path: shown, message: "PostgreSQL: \(detail)\(state.isEmpty ? "" : " (\(state))")")
        }
    }

    /// NIO's connection errors carry every address tried; the first line says enough.
    private static func shortReason(_ reason: String) -> String {
        if reason.contains("refused") || reason.contains("111") { return "connection refused" }
        if reason.contains("imeout") { return "timed out" }
        if reason.contains("reset by peer") { return "connection reset by the server" }
        // NIO ends an I/O error with "(errno: N)": said without the parentheses, inside the
        // message's own.
        var short = String(reason.prefix(160))
        if let errno = short.range(of: #" \(errno: (\d+)\)$"#, options: .regularExpression) {
            let number = String(short[errno].filter(\.isNumber))
            short = String(short[..<errno.lowerBound]) + ", errno " + number
        }
        return short
    }
}

/// The connection is closed, or a statement went unanswered past the timeout.
private struct ConnectionLost: Error {}

extension PostgresStore.Transaction: SQLStatements {
    @discardableResult
    package func execute(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        try store.run(sql, arguments, on: connection).rows
    }

    /// In a transaction made read-only first (a write the caller's check cannot see, such as a
    /// data-modifying WITH or `nextval`, fails on the server), cut with LIMIT.
    package func readOnlyQuery(
        _ sql: String, limit: Int
    ) throws -> (columns: [String], rows: [[SQLValue]], truncated: Bool) {
        try execute("SET TRANSACTION READ ONLY", [])
        let rows = try execute("SELECT * FROM (\(sql)) AS query LIMIT ?", [.integer(Int64(limit) + 1)])
        return (rows.first?.columns ?? [], rows.prefix(limit).map(\.values), rows.count > limit)
    }

    /// Many rows to a statement (PostgreSQL binds at most 65,535 values), so that rows cost no
    /// round trip each.
    package func insertRows(into table: String, columns: [String], rows: [[SQLValue]], returning: [String]) throws
        -> [SQLRow]
    {
        guard !rows.isEmpty, !columns.isEmpty else { return [] }
        let perStatement = max(1, min(1000, 65_535 / columns.count))
        let tuple = "(\(StoreTable.placeholders(columns.count)))"
        let head = "INSERT INTO \(StoreTable.quote(table)) (\(StoreTable.list(columns))) VALUES "
        let tail = returning.isEmpty ? "" : " RETURNING \(StoreTable.list(returning))"
        var out: [SQLRow] = []
        for start in stride(from: 0, to: rows.count, by: perStatement) {
            let chunk = rows[start..<min(rows.count, start + perStatement)]
            let sql = head + Array(repeating: tuple, count: chunk.count).joined(separator: ", ") + tail
            out += try store.run(sql, chunk.flatMap { $0 }, on: connection).rows
        }
        return out
    }
}

extension PostgresStore: SQLDatabase {
    package var dialect: SQLDialect { .postgres }
    package var displayName: String { url.description }

    /// A transaction too, with one snapshot for all of `body`'s statements, as a SQLite read has: PostgreSQL's default
    /// (READ COMMITTED) gives each statement its own, so a list and its count could disagree.
    /// Read-only, as SQLite's readers are; such a transaction never fails to serialize.
    package func readStatements<T: Sendable>(
        _ body: @Sendable (any SQLStatements) throws -> T
    ) throws(WorkspaceError) -> T {
        try transaction(begin: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") { try body($0) }
    }

    package func writeStatements<T: Sendable>(
        _ body: @Sendable (any SQLStatements) throws -> T
    ) throws(WorkspaceError) -> T {
        try transaction { try body($0) }
    }

    /// One statement in its own implicit transaction.
    package func writeStatement(_ sql: String, _ arguments: [SQLValue]) throws(WorkspaceError) -> [SQLRow] {
        try execute(sql, arguments)
    }
}
