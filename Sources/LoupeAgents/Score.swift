import Foundation
import LoupeBase

/// A scorer's verdict on a trace (Inspect scores, OTel evaluation results).
package struct Score: Hashable, Sendable {
    package var scorer: String
    package var value: JSONValue
    package var answer: String?
    package var explanation: String?

    package init(scorer: String, value: JSONValue, answer: String? = nil, explanation: String? = nil) {
        self.scorer = scorer
        self.value = value
        self.answer = answer
        self.explanation = explanation
    }
}
