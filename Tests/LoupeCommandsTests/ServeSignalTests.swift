import Foundation
import Glibc
import Testing

/// `loupe serve` stopped by a signal that arrives twice at once, as `timeout` and a terminal's
/// Ctrl-C deliver it (to the process and to its group): one request to stop, not "stop at once".
@Suite(.serialized) struct ServeSignalTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func theSameSignalTwiceAtOnceStopsCleanly(number: Int32) throws {
        let (server, _) = try OTLPPeerTests.serve()
        let pid = server.process.processIdentifier
        kill(pid, number)
        kill(pid, number)
        let rest = String(decoding: server.output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        server.process.waitUntilExit()
        #expect(server.process.terminationStatus == 0, "\(rest)")
        #expect(rest.contains("stopped: ") && !rest.contains("stopping at once"), "\(rest)")
    }
}
