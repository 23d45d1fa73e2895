/// One answer's place in an eval run: the dataset item it answers and the epoch (1-based). A
/// run answers each key once; resume, `--only-failed` and the panels match answers and scores
/// by it.
package struct EvalItemKey: Hashable, Sendable, CustomStringConvertible {
    package var itemID: String
    package var epoch: Int

    package init(itemID: String, epoch: Int) {
        self.itemID = itemID
        self.epoch = epoch
    }

    /// `item` for the first epoch, `item (epoch N)` after it.
    package var description: String { epoch == 1 ? itemID : "\(itemID) (epoch \(epoch))" }
}

extension EvalResultRecord {
    /// The item and epoch this answer answers.
    package var itemKey: EvalItemKey { EvalItemKey(itemID: itemID, epoch: epoch) }
}

extension EvalScoreRecord {
    /// The item and epoch of the answer this score belongs to.
    package var itemKey: EvalItemKey { EvalItemKey(itemID: itemID, epoch: epoch) }
}
