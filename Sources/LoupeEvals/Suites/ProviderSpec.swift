import LoupeAgents
import LoupeBase

/// Which chat provider answers: `offline` (in-process, no network) or `openai` (any
/// OpenAI-compatible server). The key is named by an environment variable, never stored.
package struct ProviderSpec: Hashable, Sendable {
    package var kind = "offline"
    package var baseURL: String?
    package var model: String?
    package var apiKeyEnv = "OPENAI_API_KEY"
    package var stream = true

    package init(kind: String = "offline") { self.kind = kind }
}
