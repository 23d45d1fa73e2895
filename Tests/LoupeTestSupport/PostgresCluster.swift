import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real PostgreSQL server for the tests: `initdb` into a temporary directory, `pg_ctl start` on
/// a free loopback port, password (SCRAM) authentication for a superuser `loupe`, TLS with a
/// self-signed certificate (so `sslmode=require` has something to negotiate); stopped when
/// the test process exits. One cluster per test process; each test takes a database of its own
/// (``database(_:)``), so tests running side by side see nothing of each other's.
///
/// Under root (CI) the server runs as the `postgres` user Debian's package creates, since
/// PostgreSQL refuses to run as root.
package final class PostgresCluster: Sendable {
    package static let user = "loupe"
    package static let password = "loupe-test-password"

    package let port: Int
    package let directory: String
    private let binaries: String
    /// Addresses it listens on besides loopback (a test's own hosts' gateways).
    private let alsoListeningOn: [String]
    private let durable: Bool

    /// The process's cluster, started on first use.
    package static var shared: PostgresCluster {
        get throws { try started.get() }
    }

    private static let started: Result<PostgresCluster, any Error> = {
        do {
            let cluster = try PostgresCluster()
            atexit { PostgresCluster.stopShared() }
            return .success(cluster)
        } catch {
            return .failure(error)
        }
    }()

    private static func stopShared() {
        if case .success(let cluster) = started { cluster.stop() }
    }

    /// A URL for `database` with the password in it, as a user might type one.
    package func url(_ database: String, password: String? = PostgresCluster.password, host: String = "127.0.0.1")
        -> String
    {
        "postgres://\(Self.user)\(password.map { ":\($0)" } ?? "")@\(host):\(port)/\(database)"
    }

    /// Creates a fresh database named after `name` (made unique) and returns its name.
    package func database(_ name: String) throws -> String {
        let clean = name.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(40)
        let database = "t_\(clean)_\(UInt32.random(in: 0...UInt32.max))"
        try psql("CREATE DATABASE \(database)")
        return database
    }

    /// Runs one SQL command as the superuser on the `postgres` database.
    package func psql(_ sql: String, database: String = "postgres") throws {
        try Self.run(
            binaries + "/psql",
            [
                "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", String(port), "-U", Self.user, "-d",
                database,
                "-c", sql,
            ],
            environment: ["PGPASSWORD": Self.password], asServer: false)
    }

    /// Stops and starts the server (`pg_ctl restart`): what a test of a lost connection needs.
    package func restart() throws {
        try pgctl(["restart", "-m", "fast"])
    }

    /// Stops the server (`pg_ctl stop -m fast`); a later ``start()`` brings it back.
    package func stopServer() throws { try pgctl(["stop", "-m", "fast"]) }

    /// Stops the server as a crash would (`pg_ctl stop -m immediate`: connections cut, no
    /// checkpoint); a later ``start()`` brings it back after recovery.
    package func stopImmediately() throws { try pgctl(["stop", "-m", "immediate"]) }

    /// Starts a stopped server again.
    package func start() throws { try pgctl(["start"]) }

    /// A cluster of the caller's own (for a test that restarts or stops its server); stop it
    /// with ``shutdown()``. `durable`: an acknowledged commit survives ``stopImmediately()``
    /// (`synchronous_commit=on`), as on a production server; otherwise the last few hundred
    /// milliseconds of commits may be lost in the crash, which is faster for every other test.
    package static func dedicated(durable: Bool = false) throws -> PostgresCluster {
        try PostgresCluster(durable: durable)
    }

    /// A cluster of the caller's own that also listens on `addresses` and takes password logins
    /// from `clients` (a CIDR block): a database host for a test's ``NetworkHosts``.
    package static func dedicated(alsoListeningOn addresses: [String], clients: String) throws -> PostgresCluster {
        try PostgresCluster(alsoListeningOn: addresses, clients: clients)
    }

    /// Stops the server and removes its files.
    package func shutdown() { stop() }

    private init(alsoListeningOn addresses: [String] = [], clients: String? = nil, durable: Bool = false) throws {
        alsoListeningOn = addresses
        self.durable = durable
        guard let binaries = Self.findBinaries() else {
            throw ClusterError(
                "PostgreSQL's server programs (initdb, pg_ctl) are not installed: apt-get install postgresql")
        }
        self.binaries = binaries
        var template = Array((NSTemporaryDirectory() + "loupe-pg-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw ClusterError("mkdtemp failed") }
        directory = String(cString: made)
        port = try Self.freePort()
        if geteuid() == 0 {
            guard let user = getpwnam("postgres") else {
                throw ClusterError("running as root, and there is no postgres user to run the server as")
            }
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        let passwordFile = directory + "/pwfile"
        try Self.password.write(toFile: passwordFile, atomically: true, encoding: .utf8)
        if geteuid() == 0, let user = getpwnam("postgres") {
            chown(passwordFile, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try Self.run(
            binaries + "/initdb",
            [
                "-D", directory + "/data", "-U", Self.user, "--auth=scram-sha-256", "--pwfile=" + passwordFile, "-E",
                "UTF8", "--no-locale", "--no-sync",
            ],
            environment: [:], asServer: true)
        // A self-signed certificate, so that sslmode=require has TLS to negotiate.
        let data = directory + "/data"
        try Self.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-keyout",
                data + "/server.key", "-out", data + "/server.crt",
            ], environment: [:], asServer: true)
        try Self.run("/bin/chmod", ["600", data + "/server.key"], environment: [:], asServer: true)
        if let clients {
            let rules = try String(contentsOfFile: data + "/pg_hba.conf", encoding: .utf8)
            try (rules + "host all all \(clients) scram-sha-256\n").write(
                toFile: data + "/pg_hba.conf", atomically: false, encoding: .utf8)
        }
        try pgctl(["start"])
    }

    private func pgctl(_ arguments: [String]) throws {
        let options =
            "-p \(port) -c listen_addresses=\((["127.0.0.1"] + alsoListeningOn).joined(separator: ",")) -k \(directory) -c fsync=off -c synchronous_commit=\(durable ? "on" : "off") "
            + "-c full_page_writes=off -c max_connections=100 -c ssl=on"
        try Self.run(
            binaries + "/pg_ctl",
            ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60", "-o", options] + arguments,
            environment: [:], asServer: true)
    }

    private func stop() {
        try? pgctl(["stop", "-m", "immediate"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func findBinaries() -> String? {
        let versions =
            (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?
            .compactMap(Int.init).sorted(by: >) ?? []
        for version in versions
        where FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\(version)/bin/initdb") {
            return "/usr/lib/postgresql/\(version)/bin"
        }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/initdb") {
            return String(directory)
        }
        return nil
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int { try LoopbackSocket(listening: false).port }

    /// Runs a program to its end; as the `postgres` user when this process is root and
    /// `asServer`. posix_spawn and waitpid, not Foundation's Process: the server `pg_ctl start`
    /// leaves running inherits what Process watches for its child's exit.
    private static func run(_ program: String, _ arguments: [String], environment: [String: String], asServer: Bool)
        throws
    {
        let argv =
            asServer && geteuid() == 0
            ? ["/usr/sbin/runuser", "-u", "postgres", "--", program] + arguments : [program] + arguments
        let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let log = NSTemporaryDirectory() + "loupe-pg-output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: log) }
        var actions: posix_spawn_file_actions_t = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments + cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, cArguments, cEnvironment)
        guard spawned == 0 else { throw ClusterError("cannot run \(argv[0]): \(String(cString: strerror(spawned)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        // Exited normally with 0 (WIFEXITED and WEXITSTATUS, which Swift does not import).
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw ClusterError(
                "\((program as NSString).lastPathComponent) \(arguments.joined(separator: " ")): \(text)")
        }
    }
}

package struct ClusterError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
