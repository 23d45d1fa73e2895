import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A `loupe` server a peer test talks to (`serve`, `mcp --http`): its arguments ask for port 0 on
/// loopback, so the kernel picks a free port and nothing here guesses one; its first line says
/// where it listens. `stop()` ends it as a user would (SIGTERM); a test that throws first leaves
/// none behind (SIGKILL when this is dropped).
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

    /// SIGTERM, then its exit status and everything it printed after the first line.
    @discardableResult
    func stop() -> (status: Int32, output: String) {
        Glibc.kill(process.processIdentifier, SIGTERM)
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: rest, as: UTF8.self))
    }

    /// The process and its output, for a caller that stops the server itself (a test's `defer`,
    /// or one that signals it mid-test): dropping this no longer stops it.
    func handOver() -> (process: Process, output: Pipe) {
        handedOver = true
        return (process, output)
    }

    private var handedOver = false

    private func kill() {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { if !handedOver { kill() } }
}
