import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// ``LoupeServer/with(_:environment:errors:_:)`` on a real `loupe serve` (OTLP on free loopback
/// ports, no model): the server is gone when the body ends, whether it returned or threw, so a
/// failing peer test never leaves one running.
@Suite(.serialized) struct LoupeServerTests {
    struct Failed: Error {}

    static func arguments() -> [String] {
        [
            "serve", "--workspace", TestEnvironment.temporaryDirectory() + "/w.sqlite", "--http-port", "0",
            "--grpc-port", "0",
        ]
    }

    /// Whether process `pid` still exists (signal 0 checks without sending anything).
    static func exists(_ pid: Int32) -> Bool { Glibc.kill(pid, 0) == 0 }

    @Test func aBodyThatThrowsLeavesNoServerRunning() throws {
        var pid: Int32 = 0
        #expect(throws: Failed.self) {
            try LoupeServer.with(Self.arguments()) { server in
                pid = server.process.processIdentifier
                #expect(server.process.isRunning)
                throw Failed()
            }
        }
        #expect(pid > 0 && !Self.exists(pid), "the server outlived the body that threw")
    }

    @Test func aBodyThatReturnsStopsItPolitelyAndItsOwnStopIsTheOne() throws {
        let (pid, status) = try LoupeServer.with(Self.arguments()) { server in
            let stopped = server.stop()
            #expect(server.stop().status == stopped.status, "a second stop gives the first one's answer")
            return (server.process.processIdentifier, stopped.status)
        }
        #expect(status == 0, "SIGTERM ends loupe serve cleanly")
        #expect(!Self.exists(pid))
        let unstopped = try LoupeServer.with(Self.arguments()) { $0.process.processIdentifier }
        #expect(!Self.exists(unstopped), "a body that did not stop it still leaves none running")
    }
}
