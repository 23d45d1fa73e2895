import ArgumentParser
import Foundation
import LoupeKit
import LoupeStore

/// `loupe notebook run FILE…`: run notebooks and write each cell's output under it.
struct NotebookCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notebook",
        abstract: "Run Markdown notebooks of loupe commands.",
        subcommands: [Run.self]
    )

    struct Run: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run every ```loupe block of the notebooks and write its output under it.",
            discussion: """
                Without --workspace each notebook runs on a fresh scratch workspace, so its output \
                is the same on every machine and a re-run of an unchanged notebook changes nothing. \
                A command line starting with ! is expected to fail. $SCRATCH in a command is a directory of \
                the run's own (the scratch workspace's) for files the notebook writes. A ```sh run \
                block is a bash script (-e -o pipefail) run in the current directory with \
                LOUPE_WORKSPACE and SCRATCH set and this loupe first on PATH; past --shell-timeout it is \
                stopped, with what it started, and fails.
                """
        )

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Do not write; fail when a notebook's stored output differs from a fresh run.") var check = false
        @Option(help: "Seconds a ```sh run block may take.") var shellTimeout = 300
        @Argument(help: ArgumentHelp("Notebook files (Markdown).", valueName: "file")) var files: [String]

        func validate() throws {
            if shellTimeout < 1 { throw ValidationError("--shell-timeout must be at least 1 second") }
            if files.isEmpty {
                throw ValidationError("give at least one notebook file, e.g. notebooks/getting-started.md")
            }
        }

        func run(in context: CommandContext) throws {
            var problems: [String] = []
            for (index, file) in files.enumerated() {
                context.reporter.report(JobProgress(completed: Double(index), total: Double(files.count), detail: file))
                try context.reporter.checkCancellation()
                let text = try CommandFailure.readText(file)
                let stored = Notebook.parse(text)
                let result = try NotebookCommand.run(
                    stored, workspace: global.workspace, parent: context.session,
                    shellTimeout: .seconds(shellTimeout))
                // Timings differ from run to run: a check keeps the measured cells' stored output.
                let rendered = (check ? result.notebook.keepingMeasuredOutputs(of: stored) : result.notebook).rendered()
                let cells = Formatting.count(result.notebook.cells.count, "cell")
                for failure in result.failures { problems.append("\(file):\(failure.line): \(failure)") }
                if check {
                    let fresh = rendered == text
                    context.print(
                        "\(file): \(cells), \(fresh ? "up to date" : "STALE (run loupe notebook run \(file))")")
                    if !fresh { problems.append("\(file): stored output differs from a fresh run") }
                } else {
                    if rendered != text {
                        try rendered.write(toFile: file, atomically: true, encoding: .utf8)
                    }
                    context.print("\(file): \(cells), \(rendered == text ? "unchanged" : "written")")
                }
            }
            for problem in problems { context.print("  ✗ " + problem) }
            // The error line (stderr) carries the first problem itself, not only a count.
            if let first = problems.first {
                let more = problems.count > 1 ? " (and \(Formatting.count(problems.count - 1, "more problem")))" : ""
                throw CommandFailure(first + more)
            }
        }
    }

    /// Runs a notebook's cells on `workspace`, or on a scratch workspace removed afterwards.
    static func run(
        _ notebook: Notebook, workspace: String?, parent: WorkspaceSession, shellTimeout: Duration = .seconds(300)
    ) throws -> NotebookRunner.Result {
        // A directory of the run's own: the scratch workspace's, or $SCRATCH beside a database,
        // which has no folder. A workspace file given keeps its own folder as $SCRATCH.
        var scratchDirectory: String?
        if workspace.map(PostgresURL.isURL) ?? true {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "loupe-notebook-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            scratchDirectory = directory
        }
        let session =
            workspace.map { parent.with(path: $0) }
            ?? parent.with(path: scratchDirectory! + "/scratch.sqlite", displayPath: "scratch.sqlite")
        defer {
            // A listener the notebook left running commits before its workspace goes.
            session.stopListening()
            if let scratchDirectory { try? FileManager.default.removeItem(atPath: scratchDirectory) }
        }
        let executor = CommandExecutor(session: session, isInsideTUI: false)
        let shell = ShellCell(
            workspace: session.path,
            scratch: scratchDirectory
                ?? URL(fileURLWithPath: session.path).standardizedFileURL.deletingLastPathComponent().path,
            timeout: shellTimeout)
        let runner = NotebookRunner(
            execute: { line in executor.execute(line, reporter: .detached(), columns: 100) },
            shell: { script in shell.run(script) })
        return runner.run(notebook)
    }
}
