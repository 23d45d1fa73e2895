import LoupeAgents
import LoupeBase

package struct AgentTarget: Hashable, Sendable {
    package var provider = ProviderSpec()
    package var maxSteps = 8
    package var maxTokens: Int?
    package var timeout = 300.0

    package init() {}
}
