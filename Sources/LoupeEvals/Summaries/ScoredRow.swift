/// One scored answer, as the statistics need it: the item, the epoch, and each scorer's value
/// (and pass/fail where the scorer has one).
package struct ScoredRow: Hashable, Sendable {
    package var itemID: String
    package var epoch: Int
    package var values: [String: Double]
    package var passed: [String: Bool]
    package var confidence: Double?
    package var latencySeconds: Double?
    package var errored: Bool

    package init(
        itemID: String, epoch: Int, values: [String: Double], passed: [String: Bool] = [:], confidence: Double? = nil,
        latencySeconds: Double? = nil, errored: Bool = false
    ) {
        self.itemID = itemID
        self.epoch = epoch
        self.values = values
        self.passed = passed
        self.confidence = confidence
        self.latencySeconds = latencySeconds
        self.errored = errored
    }
}
