import ArgumentParser
import Foundation
import Glibc
import LoupeAgents
import LoupeKit
import LoupeTUI

/// The command line's dispatcher: parse, build a session and a context, run, exit with a status.
/// The executable (the composition root) calls it with the model library and the TUI.
package enum LoupeCLI {
    package static func main(
        models: ModelLibrary, host: (any TUIHost)?, arguments: [String] = Array(CommandLine.arguments.dropFirst())
    ) -> Never {
        let environment = ProcessInfo.processInfo.environment
        HTTPTransports.install(AsyncHTTPTransport())
        func session(_ option: String?) -> WorkspaceSession {
            makeSession(option: option, environment: environment, models: models, host: host)
        }
        do {
            let parsed = try Loupe.parseAsRoot(arguments)
            if let command = parsed as? any LoupeCommand {
                if command is ListenCommand {
                    throw CommandFailure(
                        "`loupe listen` would stop as soon as it started: run `loupe serve` from a shell, "
                            + "or `loupe --listen` (`:listen`) for the TUI")
                }
                let session = session(command.global.workspace)
                // Long commands (eval run, ingest, trace import) show their progress on a terminal.
                let progress = TerminalProgress.isWanted ? TerminalProgress(columns: terminalColumns()) : nil
                let context = CommandContext(
                    session: session, output: ProgressClearingSink(progress: progress),
                    reporter: progress?.reporter() ?? .detached(), columns: terminalColumns())
                defer { progress?.clear() }
                // A failed command may have written too: the log is folded either way.
                defer { session.close() }
                try command.run(in: context)
            } else if let root = parsed as? Loupe {
                guard let host else { throw NoTUIError() }
                let session = session(root.global.workspace)
                // `--notebooks DIR` is `LOUPE_NOTEBOOKS=DIR` for this session, before the variable's own.
                var tuiEnvironment = environment
                if !root.notebookDirectories.isEmpty {
                    tuiEnvironment["LOUPE_NOTEBOOKS"] = (root.notebookDirectories + [environment["LOUPE_NOTEBOOKS"]])
                        .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ":")
                }
                try host.openTUI(
                    session: session, theme: root.theme, jobs: root.jobs,
                    environment: tuiEnvironment,
                    firstFrameSize: benchFirstFrameSize(environment), listen: root.listen)
                session.close()
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
            if let exit = error as? CommandExit, exit.message.isEmpty { Glibc.exit(exit.code) }
            FileHandle.standardError.write(Data(("error: " + CommandExecutor.message(for: error) + "\n").utf8))
            exit((error as? CommandExit)?.code ?? 1)
        }
    }

    /// `LOUPE_BENCH_FIRST_FRAME=WxH` makes `loupe` render one frame headless and exit; `loupe
    /// bench tui` uses it to time start-up as a user's process experiences it.
    private static func benchFirstFrameSize(_ environment: [String: String]) -> Size? {
        guard let value = environment["LOUPE_BENCH_FIRST_FRAME"] else { return nil }
        let parts = value.split(separator: "x").compactMap { Int($0) }
        return parts.count == 2 ? Size(width: parts[0], height: parts[1]) : nil
    }

    /// The session for a command line: `--workspace`, else `$LOUPE_WORKSPACE`, else
    /// `./loupe.sqlite`; the busy timeout and themes from the environment.
    package static func makeSession(
        option: String?, environment: [String: String], models: ModelLibrary, host: (any TUIHost)?
    ) -> WorkspaceSession {
        WorkspaceSession(
            path: WorkspaceSession.resolvePath(option: option, environment: environment),
            busyTimeout: WorkspaceSession.busyTimeout(environment: environment),
            themes: ThemeLoader.standard(environment: environment, executablePath: CheckoutDirectory.executablePath),
            models: models, host: host
        )
    }

    static func terminalColumns() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 100
    }
}
