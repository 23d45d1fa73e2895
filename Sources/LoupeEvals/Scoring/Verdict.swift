import Foundation
import LoupeAgents
import LoupeBase

/// One scorer's verdict on one answer.
package struct Verdict: Hashable, Sendable {
    package var scorer: String
    /// In [0, 1] for every scorer here (1 = right).
    package var value: Double
    /// Pass/fail for binary scorers and thresholded ones; nil for plain continuous ones.
    package var passed: Bool?
    /// Why, in a line a person reads in the drill-down.
    package var explanation: String
    /// What the scorer saw: the judge's prompt and raw verdict, the matched span, similarities.
    package var details: JSONValue?

    package init(scorer: String, value: Double, passed: Bool?, explanation: String, details: JSONValue? = nil) {
        self.scorer = scorer
        self.value = value
        self.passed = passed
        self.explanation = explanation
        self.details = details
    }

    package static func binary(_ scorer: String, _ passed: Bool, _ explanation: String, details: JSONValue? = nil)
        -> Verdict
    {
        Verdict(scorer: scorer, value: passed ? 1 : 0, passed: passed, explanation: explanation, details: details)
    }
}
