import ArgumentParser
import Foundation
import Glibc
import LoupeKit
import LoupeTUI

/// The `loupe` executable's entry point: parse, build a context, run, exit with a status.
package enum LoupeCLI {
    package static func main(arguments: [String] = Array(CommandLine.arguments.dropFirst())) -> Never {
        let environment = ProcessInfo.processInfo.environment
        do {
            let parsed = try Loupe.parseAsRoot(arguments)
            if let command = parsed as? any LoupeCommand {
                let session = TUILauncher.makeSession(option: command.global.workspace, environment: environment)
                // Long commands (eval run, ingest, trace import) show their progress on a terminal.
                let progress = TerminalProgress.isWanted ? TerminalProgress(columns: terminalColumns()) : nil
                let context = CommandContext(
                    session: session, output: ProgressClearingSink(progress: progress),
                    reporter: progress?.reporter() ?? .detached(), columns: terminalColumns())
                defer { progress?.clear() }
                try command.run(in: context)
            } else if let root = parsed as? Loupe {
                try TUILauncher.run(root, environment: environment, benchSize: benchFirstFrameSize(environment))
            } else {
                var command = parsed
                try command.run()
            }
            exit(0)
        } catch {
            // Parse errors and help go through ArgumentParser (usage, exit 64 or 0); the errors
            // of running a command are ours: one line on stderr, exit 1.
            guard CommandExecutor.isRunError(error) else {
                let code = Loupe.exitCode(for: error)
                if code == .success { Loupe.exit(withError: error) }
                let catalog = CommandCatalog.loupe(excludingTUIOnly: false)
                let text = CommandExecutor.withSuggestion(
                    Loupe.fullMessage(for: error), words: arguments, catalog: catalog)
                FileHandle.standardError.write(Data((text + "\n").utf8))
                exit(code.rawValue)
            }
            FileHandle.standardError.write(Data(("error: " + CommandExecutor.message(for: error) + "\n").utf8))
            exit(1)
        }
    }

    /// `LOUPE_BENCH_FIRST_FRAME=WxH` makes `loupe` render one frame headless and exit; `loupe
    /// bench tui` uses it to time start-up as a user's process experiences it.
    private static func benchFirstFrameSize(_ environment: [String: String]) -> Size? {
        guard let value = environment["LOUPE_BENCH_FIRST_FRAME"] else { return nil }
        let parts = value.split(separator: "x").compactMap { Int($0) }
        return parts.count == 2 ? Size(width: parts[0], height: parts[1]) : nil
    }

    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 100
    }
}
