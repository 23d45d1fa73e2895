/// Corrections for many metrics compared at once.
package enum MultipleComparisons {
    /// Benjamini–Hochberg adjusted p-values (the step-up false-discovery-rate procedure), in the
    /// order given: a metric is flagged at level q when its adjusted p ≤ q.
    package static func benjaminiHochberg(_ pValues: [Double]) -> [Double] {
        let m = pValues.count
        guard m > 0 else { return [] }
        let order = pValues.indices.sorted { pValues[$0] < pValues[$1] }
        var adjusted = [Double](repeating: 1, count: m)
        var running = 1.0
        for rank in stride(from: m, through: 1, by: -1) {
            let index = order[rank - 1]
            running = Swift.min(running, pValues[index] * Double(m) / Double(rank))
            adjusted[index] = Swift.min(1, running)
        }
        return adjusted
    }
}
