/// One slot of a split: how much room it asks for along the split axis.
package enum Constraint: Hashable, Sendable {
    /// Exactly this many cells (or what is left, if less).
    case length(Int)
    /// This percentage of the whole, rounded down.
    case percentage(Int)
    /// A share of what the fixed slots leave, in proportion to the weight.
    case fill(Int)
}
