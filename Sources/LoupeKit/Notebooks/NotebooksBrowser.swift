import Foundation
import LoupeBase

/// The Notebooks panel's port: the notebooks in a list of folders, and one notebook read.
///
/// Thread-safety: any thread.
package struct NotebooksBrowser: Sendable {
    /// The folders searched, in order.
    package let directories: [String]

    /// A browser of the Markdown notebooks in `directories` (the first folder that holds a
    /// notebook's name wins).
    package init(directories: [String]) { self.directories = directories }

    /// Where `loupe` looks for notebooks, first wins, each folder once:
    /// - `$LOUPE_NOTEBOOKS` (folders separated by `:`, as in `$PATH`; `loupe --notebooks DIR` sets
    ///   it for the session), as Jupyter's `--notebook-dir`;
    /// - `notebooks/` in the working directory, then beside the workspace file;
    /// - the `notebooks/` of the checkout the workspace lives in (`.demo/demo.sqlite` of a
    ///   checkout finds the checkout's, whichever binary opens it), then of the one the binary
    ///   was built in;
    /// - `share/loupe/notebooks` beside an installed binary's `bin/` (`/usr/local/bin/loupe`
    ///   reads `/usr/local/share/loupe/notebooks`).
    package static func defaultDirectories(
        environment: [String: String], workingDirectory: String, workspacePath: String?, executablePath: String?
    ) -> [String] {
        var directories = (environment["LOUPE_NOTEBOOKS"] ?? "").split(separator: ":").map { folder in
            let expanded = (String(folder) as NSString).expandingTildeInPath
            return expanded.hasPrefix("/") ? expanded : workingDirectory + "/" + expanded
        }
        directories.append(workingDirectory + "/notebooks")
        let workspace = workspacePath.map {
            URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: workingDirectory))
        }
        if let workspace {
            directories.append(workspace.deletingLastPathComponent().appendingPathComponent("notebooks").path)
            // A checkout's notebooks/ is the one beside its sample-data/.
            if let checkout = CheckoutDirectory.find(
                "notebooks", containing: "getting-started.md", executablePath: workspace.path)
            {
                directories.append(checkout)
            }
        }
        if let executablePath {
            if let checkout = CheckoutDirectory.find("notebooks", executablePath: executablePath) {
                directories.append(checkout)
            }
            let bin = URL(fileURLWithPath: executablePath).resolvingSymlinksInPath().deletingLastPathComponent()
            directories.append(bin.deletingLastPathComponent().appendingPathComponent("share/loupe/notebooks").path)
        }
        var seen = Set<String>()
        return directories.map { ($0 as NSString).standardizingPath }.filter { seen.insert($0).inserted }
    }

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
