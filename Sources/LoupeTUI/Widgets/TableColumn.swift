/// A column of a ``TableView``.
package struct TableColumn: Hashable, Sendable {
    package var title: String
    package var width: Constraint
    package var alignment: Alignment

    package init(_ title: String, width: Constraint, alignment: Alignment = .leading) {
        self.title = title
        self.width = width
        self.alignment = alignment
    }
}
