import Foundation
import LoupeBase

package enum TraceFormat: String, Hashable, Sendable, Codable, CaseIterable {
    case otlp
    case openai
    case inspect
    case sweAgent = "swe-agent"
    case openaiAgents = "openai-agents"
    case loupe
}
