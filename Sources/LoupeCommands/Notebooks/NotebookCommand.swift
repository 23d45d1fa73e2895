import ArgumentParser
import Foundation
import LoupeKit

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
                the run's own (the scratch workspace's) for files the notebook writes.
                """
        )

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Do not write; fail when a notebook's stored output differs from a fresh run.") var check = false
        @Argument(help: ArgumentHelp("Notebook files (Markdown).", valueName: "file")) var files: [String]

        func validate() throws {
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
                    stored, workspace: global.workspace, parent: context.session)
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
    static func run(_ notebook: Notebook, workspace: String?, parent: WorkspaceSession) throws
        -> NotebookRunner.Result
    {
        var scratchDirectory: String?
        let session: WorkspaceSession
        if let workspace {
            session = parent.with(path: workspace)
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "loupe-notebook-\(UUID().uuidString)"
            ).path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            scratchDirectory = directory
            session = parent.with(path: directory + "/scratch.sqlite", displayPath: "scratch.sqlite")
        }
        defer {
            // A listener the notebook left running commits before its workspace goes.
            session.stopListening()
            if let scratchDirectory { try? FileManager.default.removeItem(atPath: scratchDirectory) }
        }
        let executor = CommandExecutor(session: session, isInsideTUI: false)
        let runner = NotebookRunner { line in executor.execute(line, reporter: .detached(), columns: 100) }
        return runner.run(notebook)
    }
}
