/// A mouse action at a cell.
package struct MouseEvent: Hashable, Sendable {
    /// What the mouse did.
    package enum Kind: Hashable, Sendable {
        case press
        case wheelUp
        case wheelDown
    }

    package var kind: Kind
    package var position: Point

    package init(_ kind: Kind, at position: Point) {
        self.kind = kind
        self.position = position
    }
}
