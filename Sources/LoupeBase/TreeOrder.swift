/// The order a trace's spans are stored and shown in: parents before children, siblings by start
/// time (ties in the order given); a span whose parent is missing, or is itself, is a root. One
/// rule for the importers (which order whole traces) and the store (which orders a trace that
/// grows from its stored columns), so an appended trace and an imported one agree.
package enum TreeOrder {
    /// Indices into the spans given by their `ids`, `parents` and `starts` (equal lengths):
    /// `indices` in tree order, depth first; `unreached` the spans no root reaches (a cycle of
    /// parents), in the order given. An id given twice is one span: only the copy reached first
    /// is in `indices`, and copies of an unreached id are all in `unreached`.
    package static func indices(
        ids: [String], parents: [String?], starts: [Int64]
    ) -> (indices: [Int], unreached: [Int]) {
        // Each id's first index: whether a span was reached is kept there, for all its copies.
        var first: [String: Int] = [:]
        first.reserveCapacity(ids.count)
        for (i, id) in ids.enumerated() where first[id] == nil { first[id] = i }
        var children: [String: [Int]] = [:]
        var roots: [Int] = []
        for i in ids.indices {
            if let parent = parents[i], first[parent] != nil, parent != ids[i] {
                children[parent, default: []].append(i)
            } else {
                roots.append(i)
            }
        }
        func byStart(_ a: Int, _ b: Int) -> Bool {
            starts[a] != starts[b] ? starts[a] < starts[b] : a < b
        }
        var order: [Int] = []
        order.reserveCapacity(ids.count)
        var reached = [Bool](repeating: false, count: ids.count)
        var stack = Array(roots.sorted(by: byStart).reversed())
        while let i = stack.popLast() {
            let id = first[ids[i]]!
            guard !reached[id] else { continue }
            reached[id] = true
            order.append(i)
            stack += (children[ids[i]] ?? []).sorted(by: byStart).reversed()
        }
        return (order, ids.indices.filter { !reached[first[ids[$0]]!] })
    }
}
