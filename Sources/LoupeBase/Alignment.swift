/// Horizontal placement of text inside a wider space.
package enum Alignment: Sendable, Hashable {
    case leading
    case trailing
    case center
}
