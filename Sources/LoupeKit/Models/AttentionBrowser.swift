/// The Attention panel's port: MiniLM run on a sentence or a pair with every head's attention
/// and every layer's residual stream kept.
///
/// Thread-safety: any thread; the model is loaded once by the library.
package struct AttentionBrowser: Sendable {
    private let models: ModelLibrary

    package init(models: ModelLibrary) { self.models = models }

    /// Every head of every layer on `request`; throws a ``ModelError`` that says how to fetch
    /// MiniLM when it is missing.
    package func analyze(_ request: AttentionRequest) throws -> AttentionAnalysis {
        AttentionAnalysis(text: request.first, second: request.second, embedder: try models.miniLM())
    }
}
