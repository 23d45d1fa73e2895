import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeRetrieval
import LoupeStore
import Synchronization

/// Runs command lines of the Loupe language in-process: the TUI's `:` line and palette, the
/// REPL and notebooks all come through here, so they parse and behave exactly like the shell.
package struct CommandExecutor: CommandService {
    package let session: WorkspaceSession
    package let isInsideTUI: Bool
    package let catalog: CommandCatalog
    /// Where the scratch workspaces of ``CommandPlace/Target/scratch(_:)`` go; whoever runs the
    /// executor removes it when done (the TUI as it exits).
    package let scratchRoot: String
    /// The scratch sessions made so far, by name: a notebook's cells share one, so what a cell
    /// starts (a `listen`) lasts until the notebook's next cells have run.
    private let scratches = ScratchSessions()

    private final class ScratchSessions: Sendable {
        let byName = Mutex<[String: WorkspaceSession]>([:])
    }

    package init(session: WorkspaceSession, isInsideTUI: Bool, scratchRoot: String = CommandExecutor.scratchDirectory) {
        self.session = session
        self.isInsideTUI = isInsideTUI
        self.scratchRoot = scratchRoot
        catalog = CommandCatalog.loupe(excludingTUIOnly: isInsideTUI)
    }

    package func execute(_ line: String, reporter: JobReporter, columns: Int) -> CommandOutcome {
        execute(line, reporter: reporter, columns: columns, place: .open)
    }

    package func execute(_ line: String, reporter: JobReporter, columns: Int, place: CommandPlace) -> CommandOutcome {
        var outcome = executeShowingURLs(line, reporter: reporter, columns: columns, place: place)
        // What fails reaches a status line or a shell: a URL a message repeats (a mistyped
        // option's value) shows no password.
        outcome.error = outcome.error.map { URLCredentials.redactingURLs(inText: $0, placeholder: "***") }
        return outcome
    }

    private func executeShowingURLs(_ line: String, reporter: JobReporter, columns: Int, place: CommandPlace)
        -> CommandOutcome
    {
        var words: [String]
        do {
            words = try CommandLineSplitter.split(line)
        } catch {
            return CommandOutcome(
                error: URLCredentials.redactingURLs(inCommandLine: error.message, placeholder: "***"))
        }
        // An unquoted password with a space splits its URL in two words: said before anything
        // parses (and would repeat) either half.
        if URLCredentials.hasURLCutAtSpace(words) {
            return CommandOutcome(
                error: "a URL's password holds a space, which ends the word there: quote the URL "
                    + "('postgres://user:pass word@host/db') or write the space as %20; nothing was run")
        }
        if words.first == "loupe" { words.removeFirst() }
        if let directory = place.directory { words = words.map { Self.resolving($0, from: directory) } }
        var session = self.session
        if case .scratch(let name) = place.target {
            do {
                session = try scratchSession(name)
            } catch {
                return CommandOutcome(
                    error: "cannot make a scratch workspace for \(name): \(error.localizedDescription)")
            }
        }
        guard !words.isEmpty else { return CommandOutcome() }
        // `$SCRATCH` is the workspace's own directory, for files a notebook writes beside its
        // scratch workspace. A scratch workspace (one shown by another name) is a directory made
        // for this run: what a command says shows it as `$SCRATCH` again, so a notebook's output is
        // the same on every run.
        let directory = URL(fileURLWithPath: session.path).standardizedFileURL.deletingLastPathComponent().path
        let scratch = session.displayPath != session.path
        // A line typed on the TUI's `:` line (the open workspace, paths as given) rather than a
        // notebook's cell, which says the same in the TUI as in a shell.
        let typed = isInsideTUI && place == .open
        guard scratch || words.contains(where: { $0.contains("$SCRATCH") }) else {
            return execute(words: words, session: session, reporter: reporter, columns: columns, typed: typed)
        }
        var outcome = execute(
            words: words.map { $0.replacingOccurrences(of: "$SCRATCH", with: directory) }, session: session,
            reporter: reporter, columns: columns, typed: typed)
        if scratch {
            outcome.output = outcome.output.replacingOccurrences(of: directory, with: "$SCRATCH")
            outcome.error = outcome.error?.replacingOccurrences(of: directory, with: "$SCRATCH")
        }
        return outcome
    }

    private func execute(words: [String], session: WorkspaceSession, reporter: JobReporter, columns: Int, typed: Bool)
        -> CommandOutcome
    {
        let parsed: any ParsableCommand
        do {
            parsed = try Loupe.parseAsRoot(words)
        } catch {
            var text = Loupe.fullMessage(for: error, columns: columns)
            if Loupe.exitCode(for: error) == .success { return CommandOutcome(output: text + "\n") }
            // The TUI's `:` line has no use for the shell's usage line (`loupe [--workspace …]`):
            // a mistyped command is named, with the closest one.
            if typed, let unknown = CommandExecutor.unknownCommand(in: words, catalog: catalog) {
                return CommandOutcome(error: unknown)
            }
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
                        "the TUI is on \(session.displayPath); --workspace cannot change it here (quit and run loupe --workspace \(PostgresURL.redact(other)))"
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

    /// The scratch workspaces of this process (a notebook's session in the TUI), in a directory
    /// the TUI removes as it exits.
    package static let scratchDirectory =
        FileManager.default.temporaryDirectory.appendingPathComponent("loupe-scratch-\(getpid())").path

    private func scratchSession(_ name: String) throws -> WorkspaceSession {
        try FileManager.default.createDirectory(atPath: scratchRoot, withIntermediateDirectories: true)
        let file = name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "-" }
        return scratches.byName.withLock { sessions in
            if let made = sessions[name] { return made }
            let made = session.with(path: scratchRoot + "/" + String(file) + ".sqlite", displayPath: "scratch " + name)
            sessions[name] = made
            return made
        }
    }

    /// `word` as an absolute path when it is a relative path (`sample-data/x.jsonl`, or the
    /// value of `--option=path`) to something that exists under `directory` or one of its
    /// parents up to the repository holding it (the nearest with a `.git` or `Package.swift`;
    /// `directory`'s parent when there is none); otherwise as it was, so an output that does not
    /// exist yet is written where the command runs.
    package static func resolving(_ word: String, from directory: String) -> String {
        if word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
            return String(word[...equals]) + resolving(String(word[word.index(after: equals)...]), from: directory)
        }
        guard !word.isEmpty, word != ".", word != "..", !word.hasPrefix("/"), !word.hasPrefix("-"),
            !word.hasPrefix("~"), word.contains("/") || word.contains(".")
        else { return word }
        let files = FileManager.default
        let start = URL(fileURLWithPath: directory).standardizedFileURL
        var bases = [start]
        var base = start
        while true {
            if files.fileExists(atPath: base.appendingPathComponent(".git").path)
                || files.fileExists(atPath: base.appendingPathComponent("Package.swift").path)
            {
                break
            }
            let parent = base.deletingLastPathComponent()
            guard parent.path != base.path else {
                // No repository above: the notebook's folder and its parent only.
                bases = [start, start.deletingLastPathComponent()]
                break
            }
            base = parent
            bases.append(base)
        }
        for base in bases {
            let candidate = base.appendingPathComponent(word).standardizedFileURL.path
            if files.fileExists(atPath: candidate) { return candidate }
        }
        return word
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

    /// The first of `words` that names no command where one is expected, with the command path
    /// before it; nil when every command word is known (or an option or argument comes first).
    private static func firstUnknownCommand(in words: [String], catalog: CommandCatalog) -> (
        path: [String], word: String
    )? {
        var path: [String] = []
        for word in words {
            let known = catalog.subcommands(of: path)
            if known.contains(word) {
                path.append(word)
                continue
            }
            guard !word.hasPrefix("-"), !known.isEmpty else { return nil }
            return (path, word)
        }
        return nil
    }

    /// "unknown command 'trce' (did you mean 'trace'?)" for the first of `words` that names no
    /// command where one is expected; nil when every command word is known.
    static func unknownCommand(in words: [String], catalog: CommandCatalog) -> String? {
        guard let (path, word) = firstUnknownCommand(in: words, catalog: catalog) else { return nil }
        let typed = (path + [word]).joined(separator: " ")
        if let suggestion = catalog.suggestion(for: word, under: path) {
            return "unknown command '\(typed)' (did you mean '\((path + [suggestion]).joined(separator: " "))'?)"
        }
        let help = (["help"] + path).joined(separator: " ")
        return "unknown command '\(typed)' (\(help) lists the commands)"
    }

    /// Adds "did you mean …?" to an unknown-command error.
    static func withSuggestion(_ text: String, words: [String], catalog: CommandCatalog) -> String {
        guard let (path, word) = firstUnknownCommand(in: words, catalog: catalog),
            let suggestion = catalog.suggestion(for: word, under: path)
        else { return text }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let first =
            (lines.first.map(String.init) ?? text)
            + " (did you mean '\((path + [suggestion]).joined(separator: " "))'?)"
        return ([first] + lines.dropFirst().map(String.init)).joined(separator: "\n")
    }
}
