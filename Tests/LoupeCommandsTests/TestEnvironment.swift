import Foundation
import LoupeCommands
import LoupeKit

/// Paths and fresh workspaces for command tests.
enum TestEnvironment {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static let themes = ThemeLoader(searchDirectories: [repositoryRoot.appendingPathComponent("themes").path])

    /// The `loupe` binary `swift test` built next to the test bundle.
    static var binary: String {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "loupe"
        ).path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return repositoryRoot.appendingPathComponent(".build/debug/loupe").path
    }

    static func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("loupe-test-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The first line a server started by a test prints on `pipe` (where it listens), read a
    /// byte at a time so that nothing after it is consumed; what came before the pipe closed or
    /// `seconds` passed.
    static func firstLine(of pipe: Pipe, within seconds: Double = 30) -> String {
        var line = Data()
        let deadline = Date().addingTimeInterval(seconds)
        while !line.contains(0x0A) && Date() < deadline {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    static func session(_ directory: String = temporaryDirectory()) -> WorkspaceSession {
        WorkspaceSession(path: directory + "/w.sqlite", displayPath: "w.sqlite", busyTimeout: 2, themes: themes)
    }

    /// Runs `binary` (the real one unless told) as `nobody` through setpriv (util-linux), for
    /// what root would not be refused: exit status and stderr. The test must run as root.
    static func runAsNobody(_ arguments: [String], binary: String = binary) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary] + arguments
        process.environment = ["LANG": "C.UTF-8", "HOME": "/tmp"]
        let error = Pipe()
        process.standardError = error
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    /// Runs the real binary; returns exit status, stdout and stderr.
    static func run(
        _ arguments: [String], environment extra: [String: String] = [:], input: String? = nil, directory: String? = nil
    ) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["LANG"] = "C.UTF-8"
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let output = Pipe()
        let error = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}
