import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `loupe` server a peer test talks to (`serve`, `mcp --http`): its arguments ask for port 0 on
/// loopback, so the kernel picks a free port and nothing here guesses one; its first line says
/// where it listens. `stop()` ends it as a user would (SIGTERM); a test that throws first leaves
/// none behind: ``with(_:environment:errors:_:)`` stops it when its body ends, however it ends,
/// and one that is merely dropped is killed (SIGKILL).
final class LoupeServer {
    let process = Process()
    let output = Pipe()
    /// The server's first line: where it listens.
    let announcement: String

    /// Starts `loupe ARGUMENTS` with `environment` added to the test's; `errors: false` drops
    /// what it writes on stderr (a server whose clients leave mid-call logs each).
    init(_ arguments: [String], environment: [String: String] = [:], errors: Bool = true) throws {
        process.executableURL = URL(fileURLWithPath: TestEnvironment.binary)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        process.standardOutput = output
        process.standardError = errors ? output : FileHandle.nullDevice
        try process.run()
        announcement = TestEnvironment.firstLine(of: output)
    }

    /// What `pattern`'s capture holds in the first line (the URL a client connects to); an error
    /// quoting the line when it says no such thing, the server stopped.
    func address(_ pattern: Regex<(Substring, Substring)>) throws -> String {
        guard let match = announcement.firstMatch(of: pattern) else {
            kill()
            throw OTLPPeerTests.CommandTestFailure(
                "loupe \(process.arguments?.first ?? "") did not say where it listens: \(announcement)")
        }
        return String(match.1)
    }

    /// Starts `loupe ARGUMENTS` (as ``init(_:environment:errors:)``), runs `body` with it, and
    /// stops it when `body` ends: as a user would (SIGTERM) when it returns, at once (SIGKILL)
    /// when it throws, since a server that failed its test may not stop politely. A failing test
    /// never leaves a server running. `body` may stop it itself to read its exit status and
    /// output; that stop is then the one.
    static func with<Result>(
        _ arguments: [String], environment: [String: String] = [:], errors: Bool = true,
        _ body: (LoupeServer) throws -> Result
    ) throws -> Result {
        let server = try LoupeServer(arguments, environment: environment, errors: errors)
        do {
            let result = try body(server)
            server.stop()
            return result
        } catch {
            server.kill()
            throw error
        }
    }

    /// SIGTERM, then its exit status and everything it printed after the first line. Stopping a
    /// stopped server gives the first stop's answer again.
    @discardableResult
    func stop() -> (status: Int32, output: String) {
        if let stopped { return stopped }
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGTERM) }
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let result = (process.terminationStatus, String(decoding: rest, as: UTF8.self))
        stopped = result
        return result
    }

    private var stopped: (status: Int32, output: String)?

    /// SIGKILL, when it still runs.
    func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { kill() }
}
