/// A notebook: Markdown prose with fenced `loupe` blocks of commands, each optionally followed
/// by the `output` block a run wrote under it. A ```` ```sh run ```` block is a shell script
/// (for what only a shell does: start a server, run processes side by side, drive tmux); a plain
/// ```` ```sh ```` block is prose.
///
/// ````markdown
/// ```loupe
/// workspace info
/// ```
///
/// ```output
/// …
/// ```
/// ````
///
/// Parsing and rendering round-trip exactly: `Notebook.parse(text).rendered() == text` for any
/// text, so a run only changes output blocks, and a re-run of an unchanged notebook writes the
/// same file.
package struct Notebook: Hashable, Sendable {
    /// A run of lines: prose (kept verbatim) or a command cell.
    package enum Block: Hashable, Sendable {
        case prose([String])
        case cell(Cell)
    }

    /// A fenced `loupe` block and the output block under it.
    package struct Cell: Hashable, Sendable {
        package var openingFence: String
        package var lines: [String]
        package var closingFence: String
        /// The lines of the output block, nil when there is none yet.
        package var output: [String]?
        /// The lines between the cell and its output block, kept so parsing round-trips.
        package var gap: [String]
        /// The output block's fence lines as read (nil: chosen when written).
        package var outputOpeningFence: String?
        package var outputClosingFence: String?

        /// A ```` ```loupe measured ```` cell prints timings: it must run, but `notebook run
        /// --check` keeps its stored output rather than demand the same figures.
        package var isMeasured: Bool { openingFence.hasSuffix("measured") }

        /// A ```` ```sh run ```` cell: its lines are one shell script, run as a whole.
        package var isShell: Bool { Fence(opening: openingFence).map(\.isShell) ?? false }

        /// The script of a shell cell.
        package var script: String { lines.joined(separator: "\n") }

        /// Command lines to run: blank lines and `#` comments skipped.
        package var commands: [String] {
            lines.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
    }

    package var blocks: [Block]

    package init(blocks: [Block]) { self.blocks = blocks }

    /// This notebook with the outputs of its measured cells taken from `stored` (the same
    /// notebook before a run), so a check compares only what must not vary.
    package func keepingMeasuredOutputs(of stored: Notebook) -> Notebook {
        var copy = self
        let storedCells = stored.cells
        var cellIndex = 0
        for index in copy.blocks.indices {
            guard case .cell(var cell) = copy.blocks[index] else { continue }
            if cell.isMeasured, cellIndex < storedCells.count, storedCells[cellIndex].output != nil {
                cell.output = storedCells[cellIndex].output
                cell.gap = storedCells[cellIndex].gap
                copy.blocks[index] = .cell(cell)
            }
            cellIndex += 1
        }
        return copy
    }

    /// The cells in order.
    package var cells: [Cell] {
        blocks.compactMap { block in
            if case .cell(let cell) = block { return cell }
            return nil
        }
    }

    /// Parses Markdown text. Never fails: text that is not a cell is prose.
    package static func parse(_ text: String) -> Notebook {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [Block] = []
        var prose: [String] = []
        var index = 0
        func flushProse() {
            if !prose.isEmpty { blocks.append(.prose(prose)) }
            prose = []
        }
        while index < lines.count {
            let line = lines[index]
            guard let fence = Fence(opening: line) else {
                prose.append(line)
                index += 1
                continue
            }
            guard let close = fence.closingIndex(in: lines, after: index) else {
                // An unclosed fence runs to the end of the file, as in CommonMark.
                prose += lines[index...]
                break
            }
            guard fence.info == "loupe" || fence.isShell else {
                prose += lines[index...close]
                index = close + 1
                continue
            }
            flushProse()
            var cell = Cell(
                openingFence: line, lines: Array(lines[(index + 1)..<close]), closingFence: lines[close],
                output: nil, gap: []
            )
            index = close + 1
            var lookahead = index
            while lookahead < lines.count, lines[lookahead].trimmingWhitespace().isEmpty { lookahead += 1 }
            if lookahead < lines.count, let outputFence = Fence(opening: lines[lookahead]),
                outputFence.info == "output",
                let outputClose = outputFence.closingIndex(in: lines, after: lookahead)
            {
                cell.gap = Array(lines[index..<lookahead])
                cell.output = Array(lines[(lookahead + 1)..<outputClose])
                cell.outputOpeningFence = lines[lookahead]
                cell.outputClosingFence = lines[outputClose]
                index = outputClose + 1
            }
            blocks.append(.cell(cell))
        }
        flushProse()
        return Notebook(blocks: blocks)
    }

    /// The notebook as Markdown text.
    package func rendered() -> String {
        var lines: [String] = []
        for block in blocks {
            switch block {
            case .prose(let prose):
                lines += prose
            case .cell(let cell):
                lines.append(cell.openingFence)
                lines += cell.lines
                lines.append(cell.closingFence)
                if let output = cell.output {
                    lines += cell.gap
                    let fresh = Fence.outputFences(for: output)
                    lines.append(cell.outputOpeningFence ?? fresh.open)
                    lines += output
                    lines.append(cell.outputClosingFence ?? fresh.close)
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

/// A fence line: three or more backticks or tildes and an info string.
private struct Fence {
    var character: Character
    var length: Int
    var info: String

    init?(opening line: String) {
        let trimmed = line.drop { $0 == " " }
        guard line.count - trimmed.count <= 3, let first = trimmed.first, first == "`" || first == "~" else {
            return nil
        }
        let run = trimmed.prefix { $0 == first }
        guard run.count >= 3 else { return nil }
        let rest = trimmed.dropFirst(run.count)
        if first == "`", rest.contains("`") { return nil }
        character = first
        length = run.count
        words = rest.trimmingWhitespace().split(separator: " ").map(String.init)
        info = words.first ?? ""
    }

    /// The info string's words: `loupe measured` is two.
    var words: [String]

    /// ```` ```sh run ```` (and `sh run measured`): a script to run, not an example to read.
    var isShell: Bool { words.count >= 2 && words[0] == "sh" && words[1] == "run" }

    func closingIndex(in lines: [String], after opening: Int) -> Int? {
        var index = opening + 1
        while index < lines.count {
            let trimmed = lines[index].trimmingWhitespace()
            if trimmed.count >= length, trimmed.allSatisfy({ $0 == character }) { return index }
            index += 1
        }
        return nil
    }

    /// Fences for a new output block: longer than any backtick run inside it.
    static func outputFences(for output: [String]) -> (open: String, close: String) {
        var longest = 0
        for line in output {
            var run = 0
            for character in line {
                run = character == "`" ? run + 1 : 0
                longest = max(longest, run)
            }
        }
        let fence = String(repeating: "`", count: max(3, longest + 1))
        return (fence + "output", fence)
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    package func trimmingWhitespace() -> String {
        let start = drop { $0 == " " || $0 == "\t" || $0 == "\r" }
        var end = start[...]
        while let last = end.last, last == " " || last == "\t" || last == "\r" { end = end.dropLast() }
        return String(end)
    }
}
