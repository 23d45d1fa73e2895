import LoupeKit

extension NotebooksPanel {
    /// The notebooks in the folders the composition root chose.
    package struct ListNotebooks: PortRequest {
        package init() {}

        package func ask(_ port: NotebooksBrowser) throws -> [NotebookSummary] { port.list() }
    }

    /// The folders searched for notebooks, in order: what the empty list names.
    package struct NotebookFolders: PortRequest {
        package init() {}

        package func ask(_ port: NotebooksBrowser) throws -> [String] { port.directories }
    }

    /// One notebook read and parsed.
    package struct OpenNotebook: PortRequest {
        package var path: String

        package init(path: String) {
            self.path = path
        }

        package func ask(_ port: NotebooksBrowser) throws -> Notebook { try port.open(path) }
    }
}
