import LoupeKit

extension AttentionPanel {
    /// MiniLM on a sentence or a pair, every head kept.
    package struct Analyze: PortRequest {
        package var request: AttentionRequest

        package init(request: AttentionRequest) {
            self.request = request
        }

        package func ask(_ port: AttentionBrowser) throws -> AttentionAnalysis { try port.analyze(request) }
    }
}
