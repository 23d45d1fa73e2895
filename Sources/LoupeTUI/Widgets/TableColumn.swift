import LoupeBase

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

extension TableColumn {
    /// The indices of `columns` to show in `width` cells: the columns in `dropOrder` (least telling
    /// first) give way, one at a time, until every fixed width plus a separator, and
    /// `fillMinimum` plus a separator for each fill column, fit in `width - 2` (the table's edges).
    package static func fitting(
        _ columns: [TableColumn], in width: Int, dropping dropOrder: [Int], fillMinimum: Int
    ) -> [Int] {
        var shown = Array(columns.indices)
        for dropped in dropOrder {
            let used = shown.map { index -> Int in
                if case .length(let length) = columns[index].width { return length + 1 }
                return fillMinimum + 1
            }.reduce(0, +)
            guard used > width - 2 else { break }
            shown.removeAll { $0 == dropped }
        }
        return shown
    }
}
