import ArgumentParser
import CReadline
import Foundation
import Glibc
import LoupeBase
import LoupeKit
import Synchronization

/// `loupe repl`: the command language at a prompt, on GNU readline (history file, emacs
/// editing, tab completion of commands and options). With non-terminal input it reads lines
/// plainly, so `loupe repl < script.txt` runs a script.
struct ReplCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "repl",
        abstract: "An interactive prompt for loupe commands (readline: history, editing, completion).",
        discussion:
            "History is kept in $XDG_STATE_HOME/loupe/repl_history (~/.local/state/loupe/repl_history). Leave with exit, quit or ctrl+d."
    )
    static var runsInsideTUI: Bool { false }

    @OptionGroup var global: GlobalOptions

    func run(in context: CommandContext) throws {
        let executor = CommandExecutor(session: context.session, isInsideTUI: false)
        let interactive = isatty(STDIN_FILENO) == 1
        let columns = context.columns
        var failures = 0
        let historyPath = interactive ? ReplCommand.prepareReadline(catalog: executor.catalog) : nil
        if interactive {
            context.print("loupe \(Loupe.version) on \(context.session.displayPath). help lists commands; exit leaves.")
        }
        while let line = interactive ? ReplCommand.readInteractive("loupe› ") : readLine(strippingNewline: true) {
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if ["exit", "quit", "q"].contains(trimmed) { break }
            if let historyPath {
                add_history(SecretRedactor(secrets: []).redactCredentials(in: trimmed))
                write_history(historyPath)
            }
            let outcome = executor.execute(trimmed, reporter: .detached(), columns: columns)
            context.output.write(outcome.output)
            if let error = outcome.error {
                failures += 1
                FileHandle.standardError.write(Data(("error: " + error + "\n").utf8))
            }
        }
        if let historyPath { history_truncate_file(historyPath, 1000) }
        if !interactive, failures > 0 { throw CommandFailure(Formatting.count(failures, "command") + " failed") }
    }

    /// A line typed at GNU readline's `prompt`; nil at end of input (ctrl+d).
    static func readInteractive(_ prompt: String) -> String? {
        guard let raw = readline(prompt) else { return nil }
        defer { free(raw) }
        return String(cString: raw)
    }

    /// Sets readline up for completion and loads the history file; returns its path.
    private static func prepareReadline(catalog: CommandCatalog) -> String {
        ReplCompletion.catalog.withLock { $0 = catalog }
        loupe_rl_set_name("loupe")
        loupe_rl_set_word_breaks(" \t")
        // List the candidates on the second Tab even after a partial completion (bash needs a
        // third); ~/.inputrc, read later by readline, can still change it.
        rl_variable_bind("show-all-if-unmodified", "on")
        loupe_rl_set_completion { text, _, end in
            loupe_rl_disable_filename_completion()
            let buffer = String(cString: loupe_rl_line_buffer())
            let typed = String(decoding: buffer.utf8.prefix(Int(end)), as: UTF8.self)
            let candidates = ReplCompletion.catalog.withLock { $0.completions(for: typed).candidates }
            ReplCompletion.matches.withLock { $0 = (candidates, 0) }
            return loupe_rl_matches(text) { _, _ in
                ReplCompletion.matches.withLock { state -> UnsafeMutablePointer<CChar>? in
                    guard state.next < state.candidates.count else { return nil }
                    defer { state.next += 1 }
                    return strdup(state.candidates[state.next])
                }
            }
        }
        let environment = ProcessInfo.processInfo.environment
        let stateHome =
            environment["XDG_STATE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? ".") + "/.local/state"
        let directory = stateHome + "/loupe"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/repl_history"
        read_history(path)
        return path
    }
}

/// Readline calls completion through C function pointers that cannot capture; they read the
/// catalog and the pending matches from here. Readline is single-threaded, the locks only
/// satisfy Swift's checking.
private enum ReplCompletion {
    static let catalog = Mutex(CommandCatalog(entries: []))
    static let matches = Mutex<(candidates: [String], next: Int)>(([], 0))
}
