import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeRetrieval
import LoupeStore

/// Runs command lines of the Loupe language in-process: the TUI's `:` line and palette, the
/// REPL and notebooks all come through here, so they parse and behave exactly like the shell.
package struct CommandExecutor: CommandService {
    package let session: WorkspaceSession
    package let isInsideTUI: Bool
    package let catalog: CommandCatalog

    package init(session: WorkspaceSession, isInsideTUI: Bool) {
        self.session = session
        self.isInsideTUI = isInsideTUI
        catalog = CommandCatalog.loupe(excludingTUIOnly: isInsideTUI)
    }

    package func execute(_ line: String, reporter: JobReporter, columns: Int) -> CommandOutcome {
        var words: [String]
        do {
            words = try CommandLineSplitter.split(line)
        } catch {
            return CommandOutcome(error: error.message)
        }
        if words.first == "loupe" { words.removeFirst() }
        guard !words.isEmpty else { return CommandOutcome() }
        let parsed: any ParsableCommand
        do {
            parsed = try Loupe.parseAsRoot(words)
        } catch {
            var text = Loupe.fullMessage(for: error, columns: columns)
            if Loupe.exitCode(for: error) == .success { return CommandOutcome(output: text + "\n") }
            // ArgumentParser says "Error: "; every other error here is plain, callers add a prefix.
            if text.hasPrefix("Error: ") { text.removeFirst("Error: ".count) }
            return CommandOutcome(error: CommandExecutor.withSuggestion(text, words: words, catalog: catalog))
        }
        guard let command = parsed as? any LoupeCommand else {
            if parsed is Loupe {
                return CommandOutcome(
                    error: isInsideTUI
                        ? "the TUI is already open; type a subcommand (try help)" : "give a subcommand (try help)")
            }
            // ArgumentParser's own `help` command, or a group given alone: running it asks for
            // help through a CleanExit, which is the output.
            var builtIn = parsed
            do {
                try builtIn.run()
                return CommandOutcome()
            } catch {
                let text = Loupe.fullMessage(for: error, columns: columns)
                return Loupe.exitCode(for: error) == .success
                    ? CommandOutcome(output: text + "\n") : CommandOutcome(error: text)
            }
        }
        if isInsideTUI, !type(of: command).runsInsideTUI {
            return CommandOutcome(error: "`\(words[0])` runs in a shell, not inside the TUI")
        }
        var lineSession = session
        if let other = command.global.workspace, other != session.path {
            if isInsideTUI {
                return CommandOutcome(
                    error:
                        "the TUI is on \(session.displayPath); --workspace cannot change it here (quit and run loupe --workspace \(other))"
                )
            }
            lineSession = session.with(path: other)
        }
        let output = CapturedOutput()
        let context = CommandContext(
            session: lineSession, output: output, reporter: reporter, columns: columns, isInsideTUI: isInsideTUI)
        do {
            try command.run(in: context)
            return CommandOutcome(output: output.text, requests: context.requests)
        } catch {
            return CommandOutcome(output: output.text, error: CommandExecutor.message(for: error))
        }
    }

    /// The user-facing message of an error a command threw.
    package static func message(for error: any Error) -> String {
        runErrorMessage(error) ?? Loupe.message(for: error)
    }

    /// True for errors raised while running a command (as opposed to parsing its line).
    package static func isRunError(_ error: any Error) -> Bool {
        runErrorMessage(error) != nil
    }

    /// The message of an error a command raised while running, nil for anything else (parse
    /// errors, help requests): every ``UserFacingError`` says its own, and Foundation's file
    /// errors say theirs through ArgumentParser's message.
    private static func runErrorMessage(_ error: any Error) -> String? {
        switch error {
        case let error as any UserFacingError: return error.description
        case is CocoaError: return Loupe.message(for: error)
        default: return nil
        }
    }

    /// Adds "did you mean …?" to an unknown-command error.
    static func withSuggestion(_ text: String, words: [String], catalog: CommandCatalog) -> String {
        var path: [String] = []
        for word in words {
            let known = catalog.subcommands(of: path)
            if known.contains(word) {
                path.append(word)
                continue
            }
            if !word.hasPrefix("-"), !known.isEmpty, let suggestion = catalog.suggestion(for: word, under: path) {
                let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
                let first =
                    (lines.first.map(String.init) ?? text)
                    + " (did you mean '\((path + [suggestion]).joined(separator: " "))'?)"
                return ([first] + lines.dropFirst().map(String.init)).joined(separator: "\n")
            }
            break
        }
        return text
    }
}
