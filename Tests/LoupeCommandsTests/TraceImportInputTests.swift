import Foundation
import Glibc
import Testing

/// `loupe trace import` through the real binary, where a shell meets it: standard input read up
/// to the input limit, devices refused, and SIGINT honoured when the shell started it with SIGINT
/// ignored (`loupe ... &` in a script), storing nothing.
@Suite(.serialized) struct TraceImportInputTests {
    private static let sample = TestEnvironment.repositoryRoot.appendingPathComponent(
        "sample-data/traces/otlp-genai.jsonl"
    ).path

    /// Runs `script` in sh with the binary as $0 and `arguments` as $1...; exit status and stderr.
    private static func shell(
        _ script: String, _ arguments: [String], environment extra: [String: String]
    ) throws -> (status: Int32, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script, TestEnvironment.binary] + arguments
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let error = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = error
        try process.run()
        let said = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: said, as: UTF8.self))
    }

    @Test(arguments: ["-", "/dev/stdin"])
    func standardInputIsReadUpToTheLimit(name: String) throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        // /dev/zero on standard input never ends: the reader stops at the limit (1 MiB here).
        let result = try Self.shell(
            "exec \"$0\" --workspace \"$1\" trace import \"$2\" < /dev/zero", [workspace, name],
            environment: ["LOUPE_MAX_INPUT_MB": "1"])
        #expect(result.status == 1, "\(result.error)")
        #expect(result.error.contains("\(name): more than 1 MB came from it; Loupe reads inputs up to 1 MB"))
        #expect(result.error.contains("--max-input-mb"))

        // A trace on standard input imports as the file does.
        let piped = try TestEnvironment.run(
            ["--workspace", workspace, "trace", "import", name],
            input: try String(contentsOfFile: Self.sample, encoding: .utf8))
        #expect(piped.status == 0, "\(piped.error)")
        #expect(piped.output.contains("added"))
    }

    @Test func aDeviceIsRefusedByWhatItIs() throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let result = try TestEnvironment.run(["--workspace", workspace, "trace", "import", "/dev/zero"])
        #expect(result.status == 1)
        #expect(result.error.contains("/dev/zero: is a character device, not a regular file"))
        let flag = try TestEnvironment.run(
            ["--workspace", workspace, "trace", "import", "--max-input-mb", "0", Self.sample])
        #expect(flag.status != 0 && flag.error.contains("--max-input-mb must be at least 1"))
    }

    /// Whether process `pid` has a handler for signal `number` (`SigCgt` in /proc/PID/status).
    private static func catches(_ pid: Int32, _ number: Int32) -> Bool {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
            let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << UInt64(number - 1)) != 0
    }

    /// Started with SIGINT ignored, as `&` in a script does, the import still stops on SIGINT:
    /// exit 130, nothing stored. The import waits on standard input (half a trace sent, the pipe
    /// left open) so the signal surely arrives while it runs.
    @Test func anImportStartedWithSIGINTIgnoredStopsOnIt() throws {
        let workspace = TestEnvironment.temporaryDirectory() + "/w.sqlite"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "trap '' INT; exec \"$0\" --workspace \"$1\" trace import -", TestEnvironment.binary, workspace,
        ]
        let input = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = error
        try process.run()
        let lines = try String(contentsOfFile: Self.sample, encoding: .utf8).split(separator: "\n")
        input.fileHandleForWriting.write(Data((lines.prefix(2).joined(separator: "\n") + "\n").utf8))

        // Bounded: the handler is installed once the import starts (a few seconds at most).
        var ready = false
        for _ in 0..<600 where !ready {
            ready = Self.catches(process.processIdentifier, SIGINT)
            if !ready { usleep(50_000) }
        }
        #expect(ready, "trace import never installed a SIGINT handler")
        kill(process.processIdentifier, SIGINT)
        // Bounded too: if SIGINT were ignored, closing the input lets the import finish.
        var waited = 0
        while process.isRunning && waited < 600 {
            usleep(50_000)
            waited += 1
        }
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        let said = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationReason == .exit && process.terminationStatus == 130, "\(said)")
        #expect(said.contains("stopped by SIGINT") && said.contains("nothing was imported"), "\(said)")
        let list = try TestEnvironment.run(["--workspace", workspace, "trace", "list"])
        #expect(list.output.contains("no traces yet"), "\(list.output)")
    }
}
