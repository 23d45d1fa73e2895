import LoupeKit

extension RetrievalPanel {
    /// A query's ranking with each retriever's own top k and its judgments.
    package struct Search: PortRequest {
        package var request: RetrievalRequest

        package init(request: RetrievalRequest) {
            self.request = request
        }

        package func ask(_ port: RetrievalBrowser) throws -> RetrievalResult { try port.search(request) }
    }

    /// A whole document, by its external id.
    package struct OpenDocument: PortRequest {
        package var id: String

        package init(id: String) {
            self.id = id
        }

        package func ask(_ port: RetrievalBrowser) throws -> RetrievalDocument? { try port.document(id) }
    }

    /// The recall/QPS sweeps the workspace keeps, by workload.
    package struct LoadCurves: PortRequest {
        package init() {}

        package func ask(_ port: RetrievalBrowser) throws -> [ANNCurves] { try port.annCurves() }
    }
}
