import LoupeAgents
import LoupeBase

package struct ModelTarget: Hashable, Sendable {
    package var provider: ProviderSpec
    package var system: String?
    package var maxTokens: Int?

    package init(provider: ProviderSpec) { self.provider = provider }
}
