import LoupeBase
import LoupeStore

/// A trace's score as the Traces panel and `trace show` read it: its value decoded once, when the
/// trace is read, or the ``StoredValueError`` that says which score's column did not read back.
package struct TraceScore: Hashable, Sendable {
    package var scorer: String
    /// The value (a number, a label, a verdict object) or why it could not be read.
    package var value: Result<JSONValue, StoredValueError>
    package var answer: String?
    package var explanation: String?

    package init(
        scorer: String, value: Result<JSONValue, StoredValueError>, answer: String? = nil, explanation: String? = nil
    ) {
        self.scorer = scorer
        self.value = value
        self.answer = answer
        self.explanation = explanation
    }

    /// Score `index` of `trace` as stored, its `value_json` decoded.
    init(_ stored: NewTrace.ScoreRecord, trace: Int64, index: Int) {
        scorer = stored.scorer
        value = Result { () throws(StoredValueError) in
            try JSONValue.parse(
                stored: stored.valueJSON, "score value", row: "trace \(trace), score \(index)", column: "value_json")
        }
        answer = stored.answer
        explanation = stored.explanation
    }
}
