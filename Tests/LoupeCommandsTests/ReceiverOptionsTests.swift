import Foundation
import LoupeBase
import LoupeCommands
import LoupeKit
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `loupe serve` and `listen` take the receiver's body limits and gRPC stream limit as flags
/// (issue 64): each is refused, naming its flag, when it makes no sense, and `serve` keeps what
/// it is given.
@Suite struct ReceiverOptionsTests {
    let session = TestEnvironment.session()

    private func run(_ line: String) -> CommandOutcome {
        CommandExecutor(session: session, isInsideTUI: false).execute(line, reporter: .detached(), columns: 120)
    }

    @Test(arguments: [
        ("--body-timeout 0", "--body-timeout 0.0: give a number of seconds, more than 0 to 86400"),
        ("--body-timeout nan", "--body-timeout nan: give a number of seconds, more than 0 to 86400"),
        ("--body-grace 60", "--body-grace 60.0 is not shorter than --body-timeout 60.0"),
        ("--body-budget-mb 16", "--body-budget-mb 16 is less than --max-body-mb 32"),
        ("--body-budget-mb 0", "--body-budget-mb 0: use 1 to 65536"),
        ("--max-streams 0", "--max-streams 0: use 1 to 10000"),
    ])
    func nonsenseIsRefusedNamingTheFlag(flags: String, message: String) {
        let outcome = run("listen --http-port 0 --grpc-port 0 \(flags)")
        #expect(!outcome.succeeded)
        #expect(outcome.error?.contains(message) == true, "\(outcome.error ?? "no error")")
        #expect(session.stopListening() == nil)
    }

    /// `loupe serve --body-timeout 1 --min-body-rate 0`: a body that never ends is cut with 408
    /// at the deadline given, which its answer names (the default is 60 s, with a minimum rate).
    @Test func theBodyDeadlineGivenIsTheOneServeKeeps() throws {
        let (server, _) = try OTLPPeerTests.serve([
            "--no-grpc", "--body-timeout", "1", "--body-grace", "0", "--min-body-rate", "0", "--body-budget-mb", "64",
        ])
        let port = try #require(try server.otlpHTTP().split(separator: ":").last.flatMap { Int($0) })
        let fd = try #require(LoopbackPort.connect(port))
        defer { close(fd) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let head = Array(
            ("POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                + "Content-Length: 1000\r\n\r\n{\"resourceSp").utf8)
        #expect(send(fd, head, head.count, Int32(MSG_NOSIGNAL)) == head.count)
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer.prefix(n)
        }
        let answer = String(decoding: received, as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
        #expect(answer.contains("did not arrive within 1.0 seconds"), "\(answer)")
        #expect(server.stop().status == 0)
    }

    @Test func serveHelpDocumentsThem() throws {
        let help = try TestEnvironment.run(["serve", "--help"])
        #expect(help.status == 0)
        for flag in ["--body-timeout", "--body-grace", "--min-body-rate", "--body-budget-mb", "--max-streams"] {
            #expect(help.output.contains(flag), "serve --help does not mention \(flag)")
        }
    }
}
