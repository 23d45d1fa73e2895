import LoupeKit

extension NotebooksPanel {
    /// The notebooks in the folders the composition root chose.
    package struct ListNotebooks: PortRequest {
        package init() {}

        package func ask(_ port: NotebooksBrowser) throws -> [NotebookSummary] { port.list() }
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
