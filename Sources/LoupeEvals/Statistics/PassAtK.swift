/// Repeated-trial estimators for one item with `n` trials of which `c` passed.
package enum PassAtK {
    /// pass@k: the chance that at least one of k trials drawn without replacement passes,
    /// 1 − C(n−c, k) / C(n, k) (the unbiased estimator of Chen et al. 2021, in its stable
    /// product form).
    package static func passAt(_ k: Int, n: Int, c: Int) -> Double {
        precondition(k >= 1 && k <= n && c >= 0 && c <= n, "pass@k needs 1 ≤ k ≤ n and 0 ≤ c ≤ n")
        if n - c < k { return 1 }
        if c == 0 { return 0 }
        var fail = 1.0
        for i in (n - c + 1)...n { fail *= 1 - Double(k) / Double(i) }
        return 1 - fail
    }

    /// pass^k: the chance that all k trials drawn without replacement pass, C(c, k) / C(n, k)
    /// (τ-bench's reliability measure).
    package static func passHat(_ k: Int, n: Int, c: Int) -> Double {
        precondition(k >= 1 && k <= n && c >= 0 && c <= n, "pass^k needs 1 ≤ k ≤ n and 0 ≤ c ≤ n")
        if c < k { return 0 }
        var all = 1.0
        for i in 0..<k { all *= Double(c - i) / Double(n - i) }
        return all
    }

    /// Both curves for k = 1…n, averaged over items (each item: its trial count and passes).
    /// Items with fewer trials than k are left out of that k's mean.
    package static func curves(_ items: [(n: Int, c: Int)]) -> [(k: Int, passAt: Double, passHat: Double)] {
        let most = items.map(\.n).max() ?? 0
        guard most > 0 else { return [] }
        return (1...most).compactMap { k in
            let eligible = items.filter { $0.n >= k }
            guard !eligible.isEmpty else { return nil }
            let count = Double(eligible.count)
            return (
                k, eligible.reduce(0) { $0 + passAt(k, n: $1.n, c: $1.c) } / count,
                eligible.reduce(0) { $0 + passHat(k, n: $1.n, c: $1.c) } / count
            )
        }
    }
}
