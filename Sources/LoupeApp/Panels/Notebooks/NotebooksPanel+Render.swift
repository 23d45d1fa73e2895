import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension NotebooksPanel {
    package func render(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        let (listArea, documentArea) = layout(area, zoomed: context.zoomed)
        if !listArea.isEmpty {
            let block = Block(
                title: "Notebooks", trailingTitle: isListed ? "\(notebooks.count)" : "",
                focused: context.focused && !focusOnDocument)
            let inner = block.render(into: &frame, area: listArea, theme: theme)
            if notebooks.isEmpty {
                // Short enough for the list's width; where Loupe looked is on the right.
                let message = isListed ? "No notebooks found." : "Looking for notebooks…"
                frame.draw(message, at: Point(x: inner.x + 1, y: inner.y), style: theme.dim, clip: inner)
            } else {
                // Titles give way to the cell count, which stays right-aligned.
                let room = inner.width - 2 - (notebooks.count > inner.height ? 1 : 0)
                let items = notebooks.map { summary -> [Span] in
                    let count = "\(summary.cellCount) cells"
                    let title = TextWidth.fit(summary.title, toColumns: max(1, room - TextWidth.of(count) - 1))
                    return [Span(title + " ", theme.text), Span(count, theme.dim)]
                }
                var state = list
                ListView(
                    items: items, focused: context.focused && !focusOnDocument,
                    highlight: focusOnDocument ? "" : context.searchQuery
                )
                .render(into: &frame, area: inner, state: &state, theme: theme)
                if list.selected < notebooks.count {
                    // Which file the selected entry is: a name is listed once, from the first folder that
                    // holds it (a working directory's notebooks/ before the checkout's).
                    let path = Self.shownPath(notebooks[list.selected].path, from: Self.workingDirectory)
                    let text = " " + Self.fitted(path, toColumns: max(1, listArea.width - 6)) + " "
                    frame.draw(text, at: Point(x: listArea.x + 2, y: listArea.maxY - 1), style: theme.dim)
                }
            }
        }
        guard !documentArea.isEmpty else { return }
        renderDocument(into: &frame, area: documentArea, context: context)
    }

    /// Where the composition root looked (each folder searched, shown from the working
    /// directory), and how to point it elsewhere: a binary copied out of its checkout, on a
    /// workspace outside one, finds none of its own.
    static func noNotebooksHint(searched folders: [String]) -> String {
        let looked =
            folders.isEmpty
            ? "$LOUPE_NOTEBOOKS, ./notebooks, notebooks/ beside the workspace or in its checkout, or the "
                + "notebooks/ of the checkout this binary was built in."
            : folders.map { "  " + shownPath($0, from: workingDirectory) + "/" }.joined(separator: "\n")
        return """
            No notebooks in:
            \(looked)

            Point Loupe at a folder:
              loupe --notebooks DIR
              LOUPE_NOTEBOOKS=DIR loupe
            (several folders: DIR1:DIR2), or start it where a notebooks/ folder is.

            Notebooks are Markdown files with ```loupe blocks; `loupe notebook run FILE.md` writes \
            their output.
            """
    }

    private func renderDocument(into frame: inout Frame, area: Rect, context: PanelRenderContext) {
        let theme = context.theme
        // The notebook's path, so two folders' notebooks of one name are told apart.
        let name = document.map { Self.shownPath($0.path, from: Self.workingDirectory) } ?? ""
        let runsOn = runsOnOpenWorkspace ? "on the open workspace" : "on a scratch workspace"
        let block = Block(
            title: document == nil ? "Notebook" : name,
            trailingTitle: document.map { _ in runsOn + " (w) · enter run · r run all" } ?? "",
            focused: context.focused && focusOnDocument)
        let inner = block.render(into: &frame, area: area, theme: theme)
        guard let document else {
            let hint =
                notebooks.isEmpty && isListed
                ? Self.noNotebooksHint(searched: searchedFolders)
                : notebooks.isEmpty
                    ? ""
                    : "Select a notebook and press enter to open it."
            TextView(text: hint, style: theme.dim).render(
                into: &frame, area: inner.inset(dx: 1, dy: 0), offset: 0, theme: theme)
            return
        }
        if let error = document.error {
            TextView(text: error, style: theme.status(.error)).render(
                into: &frame, area: inner.inset(dx: 1, dy: 0), offset: 0, theme: theme)
            return
        }
        guard let notebook = document.notebook else {
            frame.draw("Reading…", at: Point(x: inner.x + 1, y: inner.y), style: theme.dim, clip: inner)
            return
        }
        var rows: [[Span]] = []
        var cellRows: [Int: Range<Int>] = [:]
        var cellIndex = 0
        let width = max(1, inner.width - 3)
        for block in notebook.blocks {
            switch block {
            case .prose(let lines):
                for paragraph in Self.reflowed(lines) {
                    let spans =
                        paragraph.hasPrefix("#")
                        ? [Span(String(paragraph.drop { $0 == "#" || $0 == " " }), theme.title)]
                        : Self.inlineMarkdown(paragraph, theme: theme)
                    rows += TextView(lines: [spans]).displayRows(width: width)
                }
            case .cell(let cell):
                let start = rows.count
                let selected = cellIndex == document.cell
                // A shell cell shows its script whole, comments included: it is read as a script.
                for command in cell.isShell ? cell.lines : cell.commands {
                    rows.append([
                        Span(
                            selected && context.focused && focusOnDocument ? "▶ " : cell.isShell ? "│ " : "$ ",
                            theme.key),
                        Span(command, theme.accent),
                    ])
                }
                let output = document.runOutputs[cellIndex] ?? cell.output ?? []
                if document.running.contains(cellIndex) {
                    rows.append([Span("  running…", theme.status(.info))])
                } else if let result = document.results[cellIndex] {
                    // How this session's run of the cell ended.
                    rows.append([
                        Span(
                            result.failed ? "  ✗ failed" : "  ✓ ran", theme.status(result.failed ? .error : .ok)),
                        Span(String(format: " in %.2f s", result.seconds), theme.dim),
                    ])
                }
                for line in output {
                    let style = line.hasPrefix("error:") ? theme.status(.error) : theme.dim
                    // Output is indented under its command, wrapped rows included.
                    rows += TextView(lines: [[Span(line, style)]]).displayRows(width: max(1, width - 2)).map {
                        [Span("  ", style)] + $0
                    }
                }
                cellRows[cellIndex] = start..<rows.count
                cellIndex += 1
            }
        }
        // Scroll so the selected cell starts a third of the way down, when it can.
        let selectedRange = cellRows[document.cell] ?? 0..<0
        let offset = max(0, min(selectedRange.lowerBound - inner.height / 3, rows.count - inner.height))
        let body = Rect(x: inner.x + 1, y: inner.y, width: inner.width - 1, height: inner.height)
        for row in 0..<inner.height where offset + row < rows.count {
            let index = offset + row
            if selectedRange.contains(index) {
                let marker = Rect(x: inner.x, y: inner.y + row, width: 1, height: 1)
                frame.draw(
                    "▌", at: Point(x: marker.x, y: marker.y),
                    style: theme.border(focused: context.focused && focusOnDocument))
            }
            frame.draw(
                rows[index], at: Point(x: body.x, y: body.y + row),
                clip: Rect(x: body.x, y: body.y, width: body.width - 1, height: body.height))
        }
        Scrollbar.render(into: &frame, x: inner.maxX - 1, rows: inner, offset: offset, count: rows.count, theme: theme)
    }

    /// The directory paths are shown relative to: the one Loupe was started in.
    static var workingDirectory: String { FileManager.default.currentDirectoryPath }

    /// `path` as the panel shows it: relative to `directory` when inside it, else as it is.
    static func shownPath(_ path: String, from directory: String) -> String {
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path
    }

    /// `path` in `columns`: whole when it fits, else its folder (what tells two notebooks of one
    /// name apart), cut at the front ("…/checkout/notebooks/") when that is too long too.
    static func fitted(_ path: String, toColumns columns: Int) -> String {
        guard TextWidth.of(path) > columns else { return path }
        let folder = path.contains("/") ? String(path[...path.lastIndex(of: "/")!]) : path
        guard TextWidth.of(folder) > columns else { return folder }
        var kept = ""
        var used = TextWidth.of("…")
        for character in folder.reversed() {
            used += TextWidth.of(character)
            guard used <= columns else { break }
            kept.insert(character, at: kept.startIndex)
        }
        return "…" + kept
    }

    /// Markdown prose as the lines to wrap: the lines of a paragraph joined (its source line
    /// breaks are not breaks on screen), headings, list items, quotes, tables and blank lines kept.
    static func reflowed(_ lines: [String]) -> [String] {
        var result: [String] = []
        var paragraph: [String] = []
        func flush() {
            if !paragraph.isEmpty { result.append(paragraph.joined(separator: " ")) }
            paragraph = []
        }
        for line in lines {
            let trimmed = line.trimmingWhitespace()
            let numbered = trimmed.prefix { $0.isNumber }
            let listItem =
                trimmed.hasPrefix("- ") || trimmed.hasPrefix("* ")
                || (!numbered.isEmpty && trimmed.dropFirst(numbered.count).hasPrefix(". "))
            if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix("|") || trimmed.hasPrefix(">") {
                flush()
                result.append(line)
            } else if listItem {
                // A list item starts its own paragraph; its continuation lines join it.
                flush()
                paragraph.append(line)
            } else {
                paragraph.append(paragraph.isEmpty ? line : trimmed)
            }
        }
        flush()
        return result
    }

    /// A line of Markdown with `code` in the accent colour and **strong** in bold, the marks
    /// themselves not shown.
    static func inlineMarkdown(_ line: String, theme: Theme) -> [Span] {
        var spans: [Span] = []
        var plain = ""
        var bold = false
        var code = false
        var index = line.startIndex
        func flush() {
            if !plain.isEmpty {
                spans.append(Span(plain, code ? theme.accent : bold ? theme.text.adding(.bold) : theme.text))
            }
            plain = ""
        }
        while index < line.endIndex {
            let rest = line[index...]
            if rest.hasPrefix("`") {
                flush()
                code.toggle()
                index = line.index(after: index)
            } else if !code, rest.hasPrefix("**") {
                flush()
                bold.toggle()
                index = line.index(index, offsetBy: 2)
            } else {
                plain.append(line[index])
                index = line.index(after: index)
            }
        }
        flush()
        return spans
    }
}
