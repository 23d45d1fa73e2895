/// Runs every cell of a notebook and writes each cell's output under it.
///
/// Output is deterministic for deterministic commands: nothing is added that depends on time or
/// the machine. A command line starting with `!` is expected to fail (its error is the output);
/// any other failure is recorded in the output and reported in ``Result/failures``.
package struct NotebookRunner: Sendable {
    /// A command that did not do what the notebook expected.
    package struct Failure: Hashable, Sendable, CustomStringConvertible {
        package var cell: Int
        /// The command's line in the notebook as it was read (1-based).
        package var line: Int
        package var command: String
        package var message: String

        /// The cell, the command and the error, each cut to a width a terminal shows on one line
        /// (a failing command can be a 100 KB line).
        package var description: String {
            "cell \(cell + 1), `\(Self.shortened(command, to: 80))`: \(Self.shortened(message, to: 200))"
        }

        private static func shortened(_ text: String, to width: Int) -> String {
            let oneLine = String(text.map { $0 == "\n" ? " " : $0 })
            return oneLine.count <= width ? oneLine : oneLine.prefix(width - 1) + "…"
        }
    }

    /// The notebook with fresh outputs, and what went wrong.
    package struct Result: Hashable, Sendable {
        package var notebook: Notebook
        package var failures: [Failure]
    }

    package var execute: @Sendable (String) -> CommandOutcome
    /// Runs a ```` ```sh run ```` cell's script; nil where shell cells are not run (their
    /// cells then fail, saying so).
    package var shell: (@Sendable (String) -> CommandOutcome)?

    package init(
        execute: @escaping @Sendable (String) -> CommandOutcome,
        shell: (@Sendable (String) -> CommandOutcome)? = nil
    ) {
        self.execute = execute
        self.shell = shell
    }

    package func run(_ notebook: Notebook, progress: (Int, Int) -> Void = { _, _ in }) -> Result {
        var result = notebook
        var failures: [Failure] = []
        let total = notebook.cells.count
        var cellIndex = 0
        var firstLineOfBlock = 1
        for (blockIndex, block) in notebook.blocks.enumerated() {
            let blockStart = firstLineOfBlock
            firstLineOfBlock += Self.lineCount(of: block)
            guard case .cell(var cell) = block else { continue }
            var (output, cellFailures) =
                cell.isShell
                ? runScript(of: cell, cellIndex: cellIndex, line: blockStart)
                : runCommands(of: cell, cellIndex: cellIndex, firstLine: blockStart)
            failures += cellFailures
            if output.isEmpty { output = ["(no output)"] }
            if cell.output == nil { cell.gap = [""] }
            // A new output may need a longer fence than the old one (backticks inside).
            if cell.output != output {
                cell.outputOpeningFence = nil
                cell.outputClosingFence = nil
            }
            cell.output = output
            result.blocks[blockIndex] = .cell(cell)
            cellIndex += 1
            progress(cellIndex, total)
        }
        return Result(notebook: result, failures: failures)
    }

    /// A ```` ```sh run ```` cell's script, run whole; a failure is reported at its fence.
    private func runScript(of cell: Notebook.Cell, cellIndex: Int, line: Int) -> (output: [String], failures: [Failure])
    {
        let outcome =
            shell?(cell.script) ?? CommandOutcome(error: "shell cells run with `loupe notebook run`, not here")
        let failures =
            outcome.error.map { [Failure(cell: cellIndex, line: line, command: "sh run", message: $0)] } ?? []
        return (Self.lines(of: outcome), failures)
    }

    /// A `loupe` cell's commands in order; a command starting with `!` must fail.
    private func runCommands(of cell: Notebook.Cell, cellIndex: Int, firstLine: Int) -> (
        output: [String], failures: [Failure]
    ) {
        var output: [String] = []
        var failures: [Failure] = []
        let commands = cell.commands
        // The notebook line of each command: the fence is the block's first line.
        let commandLines = cell.lines.indices.filter { index in
            let trimmed = cell.lines[index].trimmingWhitespace()
            return !trimmed.isEmpty && !trimmed.hasPrefix("#")
        }.map { firstLine + 1 + $0 }
        for (commandIndex, command) in commands.enumerated() {
            let expectFailure = command.hasPrefix("!")
            let line = expectFailure ? String(command.dropFirst()).trimmingWhitespace() : command
            let outcome = execute(line)
            if commands.count > 1 { output.append("› \(command)") }
            output += Self.lines(of: outcome)
            switch (expectFailure, outcome.error) {
            case (false, let message?):
                failures.append(
                    Failure(cell: cellIndex, line: commandLines[commandIndex], command: line, message: message))
            case (true, nil):
                failures.append(
                    Failure(
                        cell: cellIndex, line: commandLines[commandIndex], command: line,
                        message: "expected an error (the line starts with !), but it succeeded"))
            default:
                break
            }
        }
        return (output, failures)
    }

    /// How many lines `block` takes in the rendered notebook.
    private static func lineCount(of block: Notebook.Block) -> Int {
        switch block {
        case .prose(let prose): prose.count
        case .cell(let cell): 2 + cell.lines.count + (cell.output.map { cell.gap.count + 2 + $0.count } ?? 0)
        }
    }

    private static func lines(of outcome: CommandOutcome) -> [String] {
        var text = outcome.output
        if let error = outcome.error {
            if !text.isEmpty, !text.hasSuffix("\n") { text += "\n" }
            text += error.hasPrefix("error:") ? error : "error: " + error
        }
        while text.hasSuffix("\n") { text.removeLast() }
        if text.isEmpty { return [] }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { String($0).trimmingTrailingSpaces() }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
