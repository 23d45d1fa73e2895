/// Aligns two runs' steps for the diff view: steps pair up when their keys match (kind, and the
/// tool's name for a tool call), by a longest common subsequence, so an extra search in one run
/// shows as an insertion instead of shifting every later step out of line.
package enum TraceAlignment {
    /// One row of the aligned view: a step of each run, or of one only.
    package struct Row: Hashable, Sendable {
        package var left: Int?
        package var right: Int?

        package init(left: Int?, right: Int?) {
            self.left = left
            self.right = right
        }
    }

    /// Rows covering every step of both runs in order. Quadratic in time and memory, so past
    /// `limit` cells it pairs steps by position instead (equal keys only).
    package static func align<Key: Equatable>(_ a: [Key], _ b: [Key], limit: Int = 16_000_000) -> [Row] {
        let n = a.count
        let m = b.count
        guard n > 0, m > 0 else {
            return (0..<n).map { Row(left: $0, right: nil) } + (0..<m).map { Row(left: nil, right: $0) }
        }
        guard n * m <= limit else { return positional(a, b) }
        // lengths[i][j]: LCS of a[i...] and b[j...], in one flat array.
        var lengths = [Int32](repeating: 0, count: (n + 1) * (m + 1))
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                lengths[i * (m + 1) + j] =
                    a[i] == b[j]
                    ? lengths[(i + 1) * (m + 1) + j + 1] + 1
                    : max(lengths[(i + 1) * (m + 1) + j], lengths[i * (m + 1) + j + 1])
            }
        }
        var rows: [Row] = []
        var i = 0
        var j = 0
        while i < n, j < m {
            if a[i] == b[j] {
                rows.append(Row(left: i, right: j))
                i += 1
                j += 1
            } else if lengths[(i + 1) * (m + 1) + j] >= lengths[i * (m + 1) + j + 1] {
                rows.append(Row(left: i, right: nil))
                i += 1
            } else {
                rows.append(Row(left: nil, right: j))
                j += 1
            }
        }
        rows += (i..<n).map { Row(left: $0, right: nil) }
        rows += (j..<m).map { Row(left: nil, right: $0) }
        return rows
    }

    private static func positional<Key: Equatable>(_ a: [Key], _ b: [Key]) -> [Row] {
        var rows: [Row] = []
        for index in 0..<max(a.count, b.count) {
            if index < a.count, index < b.count, a[index] == b[index] {
                rows.append(Row(left: index, right: index))
            } else {
                if index < a.count { rows.append(Row(left: index, right: nil)) }
                if index < b.count { rows.append(Row(left: nil, right: index)) }
            }
        }
        return rows
    }
}
