import Foundation
import LoupeBase

/// The Notebooks panel's port: the notebooks in a list of folders, and one notebook read.
///
/// Thread-safety: any thread.
package struct NotebooksBrowser: Sendable {
    private let directories: [String]

    /// A browser of the Markdown notebooks in `directories` (the first folder that holds a
    /// notebook's name wins).
    package init(directories: [String]) { self.directories = directories }

    /// Notebooks (Markdown files with at least one `loupe` cell), by path, titled by their first
    /// `# ` heading.
    package func list() -> [NotebookSummary] {
        DirectoryListing.files(in: directories, suffixes: [".md"], firstByName: true).compactMap { path in
            // The browser lists what it can read; opening an unreadable notebook says why.
            guard let text = try? TextFile.read(path) else { return nil }
            let notebook = Notebook.parse(text)
            guard !notebook.cells.isEmpty else { return nil }
            let heading = text.split(separator: "\n").first { $0.hasPrefix("# ") }.map { String($0.dropFirst(2)) }
            return NotebookSummary(
                path: path, title: heading ?? (path as NSString).lastPathComponent, cellCount: notebook.cells.count)
        }
    }

    /// The notebook at `path`, parsed.
    package func open(_ path: String) throws -> Notebook {
        do {
            return Notebook.parse(try TextFile.read(path))
        } catch {
            throw NotebookReadError(path: path, reason: error.reasonDescription)
        }
    }
}
