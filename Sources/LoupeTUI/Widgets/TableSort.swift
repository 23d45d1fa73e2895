/// Which column a table is sorted by, and in which direction.
package struct TableSort: Hashable, Sendable {
    package var column: Int
    package var ascending: Bool

    package init(column: Int, ascending: Bool) {
        self.column = column
        self.ascending = ascending
    }

    /// The sort after the user picks `column`: the same column flips direction, a new one
    /// starts descending (the largest values are usually what one looks for).
    package func toggled(to column: Int) -> TableSort {
        column == self.column
            ? TableSort(column: column, ascending: !ascending) : TableSort(column: column, ascending: false)
    }
}
