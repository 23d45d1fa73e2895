/// Terminal column widths of text, from a built-in Unicode table.
///
/// The table is generated (see `scripts/gen-width-table.py`), so layouts and golden frames do not
/// depend on the C library or the locale of the machine that renders them.
package enum TextWidth {
    /// Columns a grapheme cluster takes: 0 (a lone combining mark or format character), 1, or 2.
    ///
    /// A cluster is as wide as its first scalar, except that an emoji presentation selector
    /// (U+FE0F) makes it wide. Control characters are 0 here; ``UntrustedText`` replaces them
    /// before they reach a cell.
    package static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        let value = first.value
        if value < 0x7F { return value < 0x20 ? 0 : 1 }
        if value < 0xA0 { return 0 }
        if scalars.count > 1, scalars.contains(where: { $0.value == 0xFE0F }) { return 2 }
        if contains(value, in: wideRanges) { return 2 }
        if contains(value, in: zeroWidthRanges) { return 0 }
        return 1
    }

    /// Columns a string takes when every cluster is drawn in order.
    package static func of(_ text: some StringProtocol) -> Int {
        var total = 0
        for character in text { total += of(character) }
        return total
    }

    /// The longest prefix of `text` that fits in `columns`, with `ellipsis` appended when cut.
    package static func truncate(_ text: String, toColumns columns: Int, ellipsis: String = "…") -> String {
        guard columns > 0 else { return "" }
        if of(text) <= columns { return text }
        let budget = columns - of(ellipsis)
        guard budget >= 0 else { return String(ellipsis.prefix(columns)) }
        var used = 0
        var result = ""
        for character in text {
            let width = of(character)
            if used + width > budget { break }
            used += width
            result.append(character)
        }
        return result + ellipsis
    }

    /// `text` cut or padded with spaces to exactly `columns`.
    package static func fit(_ text: String, toColumns columns: Int, alignment: Alignment = .leading) -> String {
        let cut = truncate(text, toColumns: columns)
        let padding = String(repeating: " ", count: max(0, columns - of(cut)))
        switch alignment {
        case .leading: return cut + padding
        case .trailing: return padding + cut
        case .center:
            let left = padding.count / 2
            return String(repeating: " ", count: left) + cut + String(repeating: " ", count: padding.count - left)
        }
    }

    private static func contains(_ value: UInt32, in ranges: [ClosedRange<UInt32>]) -> Bool {
        var low = 0
        var high = ranges.count - 1
        while low <= high {
            let middle = (low + high) / 2
            let range = ranges[middle]
            if value < range.lowerBound {
                high = middle - 1
            } else if value > range.upperBound {
                low = middle + 1
            } else {
                return true
            }
        }
        return false
    }
}
