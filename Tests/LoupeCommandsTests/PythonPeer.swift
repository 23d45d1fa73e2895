import Foundation
import LoupeBase

/// A client of scripts/reference/ run with the peers' Python (`scripts/python-peers`), the
/// official SDKs a user would run against Loupe: it prints one JSON report, which a test checks.
enum PythonPeer {
    /// Runs `scripts/reference/SCRIPT ARGUMENTS`; its stdout as JSON, or an error with the tail of
    /// its stderr when it fails.
    static func report(_ script: String, _ arguments: [String]) throws -> JSONValue {
        let python = OTLPPeerTests.python
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw OTLPPeerTests.CommandTestFailure("the Python peers are missing: run scripts/python-peers first")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments =
            [TestEnvironment.repositoryRoot.appendingPathComponent("scripts/reference/" + script).path] + arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw OTLPPeerTests.CommandTestFailure(
                "\(script) \(arguments.first ?? "") failed (\(process.terminationStatus)): "
                    + String(decoding: err, as: UTF8.self).suffix(3000))
        }
        return try JSONValue.parse(out)
    }
}
