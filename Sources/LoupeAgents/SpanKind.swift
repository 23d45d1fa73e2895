import Foundation
import LoupeBase

package enum SpanKind: String, Hashable, Sendable, Codable, CaseIterable {
    case agent, llm, tool, retrieval, embedding, eval, other
}
