import LoupeModels

/// The Attention panel's port: MiniLM run on a sentence or a pair with every head's attention
/// and every layer's residual stream kept, or SmolLM2 on a text (``CausalAttention``).
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

    /// SmolLM2 (float path) on `request`: every head's statistics and the rows of its layer.
    package func analyze(_ request: CausalAttentionRequest) throws -> CausalAttention {
        try CausalAttention(request, generator: try models.smolLM2(precision: .f32))
    }

    /// Another layer's rows of a text already analysed.
    package func layer(_ request: LayerRequest) throws -> CausalAttention.Layer {
        try CausalAttention.Layer(request.ids, layer: request.layer, model: try models.smolLM2(precision: .f32).model)
    }
}
