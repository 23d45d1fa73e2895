/// The axis along which a rectangle is split.
package enum Axis: Hashable, Sendable {
    /// Slots stacked top to bottom.
    case vertical
    /// Slots side by side, left to right.
    case horizontal
}
