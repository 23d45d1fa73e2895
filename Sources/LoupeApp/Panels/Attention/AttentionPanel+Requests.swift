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

extension AttentionPanel {
    /// SmolLM2 on a text: every head's statistics and one layer's rows. A forward pass per few
    /// layers on a long text, seconds: it runs as a job.
    package struct AnalyzeSmolLM2: PortRequest {
        package var request: CausalAttentionRequest

        package init(request: CausalAttentionRequest) {
            self.request = request
        }

        package var jobTitle: String? { "SmolLM2's attention on \(request.text.count) characters" }

        package func ask(_ port: AttentionBrowser) throws -> CausalAttention { try port.analyze(request) }
    }

    /// Another layer's rows of the text SmolLM2 analysed: one forward pass.
    package struct ReadSmolLM2Layer: PortRequest {
        package var request: AttentionBrowser.LayerRequest

        package init(request: AttentionBrowser.LayerRequest) {
            self.request = request
        }

        package var jobTitle: String? { "SmolLM2's layer \(request.layer)" }

        package func ask(_ port: AttentionBrowser) throws -> CausalAttention.Layer { try port.layer(request) }
    }
}
