import Foundation

/// Bradley–Terry strengths of two or more systems from pairwise verdicts ("which answer is
/// better?"), ties allowed: P(a beats b) = 1 / (1 + exp(s_b − s_a)).
///
/// The maximum-likelihood strengths, found by Hunter's MM iteration (Hunter 2004, "MM
/// algorithms for generalized Bradley–Terry models"), a tie counting as half a win for each
/// side. Strengths are natural-log scale, centred to mean 0 (choix's convention); only their
/// differences mean anything. Matches `choix.ilsr_pairwise` on the games with every decisive
/// game played twice and every tie once each way.
package struct BradleyTerry: Hashable, Sendable, Codable {
    /// The systems, in the order given.
    package var systems: [String]
    /// Log-strength of each system in `systems` order, mean 0. NaN when the maximum-likelihood
    /// estimate does not exist: some group of systems never won or tied against the others (a
    /// system that lost every game would have strength −∞). `WinRate` still says something there.
    package var strengths: [Double]
    /// MM iterations run.
    package var iterations: Int
    /// True when the estimate exists and the last iteration moved the strengths by less than
    /// `tolerance` (sum of absolute changes, choix's test).
    package var converged: Bool
    /// Games counted (ties included).
    package var games: Int

    /// - Parameters:
    ///   - systems: at least two distinct names.
    ///   - outcomes: one verdict per game: `score` 1 when `a` won, 0 when `b` won, 0.5 for a tie.
    ///   - maximumIterations: the MM cap; MM converges linearly, slowly when strengths are far apart.
    ///   - tolerance: stop when the strengths move less than this in total.
    package init(
        systems: [String], outcomes: [(a: String, b: String, score: Double)], maximumIterations: Int = 100_000,
        tolerance: Double = 1e-13
    ) {
        precondition(systems.count >= 2, "Bradley–Terry needs at least two systems")
        precondition(Set(systems).count == systems.count, "system names must be distinct")
        let index = Dictionary(uniqueKeysWithValues: systems.enumerated().map { ($1, $0) })
        let k = systems.count
        // wins[i][j]: i's score against j (ties half); games[i][j]: games between i and j.
        var wins = [[Double]](repeating: [Double](repeating: 0, count: k), count: k)
        var played = [[Double]](repeating: [Double](repeating: 0, count: k), count: k)
        for outcome in outcomes {
            precondition([0, 0.5, 1].contains(outcome.score), "a verdict's score is 1, 0 or 0.5")
            guard let i = index[outcome.a], let j = index[outcome.b] else {
                preconditionFailure("a verdict names a system not in `systems`")
            }
            precondition(i != j, "a system cannot play itself")
            wins[i][j] += outcome.score
            wins[j][i] += 1 - outcome.score
            played[i][j] += 1
            played[j][i] += 1
        }
        self.systems = systems
        games = outcomes.count

        guard Self.everyGroupScoresAgainstTheRest(wins) else {
            strengths = [Double](repeating: .nan, count: k)
            iterations = 0
            converged = false
            return
        }
        let totals = wins.map { $0.reduce(0, +) }
        var logStrengths = [Double](repeating: 0, count: k)
        var gamma = [Double](repeating: 1, count: k)
        var next = gamma
        iterations = 0
        converged = false
        while iterations < maximumIterations {
            iterations += 1
            // γᵢ ← Wᵢ / Σⱼ nᵢⱼ / (γᵢ + γⱼ), every system from the previous iterate.
            for i in 0..<k {
                var denominator = 0.0
                for j in 0..<k where played[i][j] > 0 { denominator += played[i][j] / (gamma[i] + gamma[j]) }
                next[i] = totals[i] / denominator
            }
            let logs = next.map { Foundation.log($0) }
            let centre = logs.reduce(0, +) / Double(k)
            var change = 0.0
            for i in 0..<k {
                let centred = logs[i] - centre
                change += abs(centred - logStrengths[i])
                logStrengths[i] = centred
                gamma[i] = exp(centred)
            }
            if change < tolerance {
                converged = true
                break
            }
        }
        strengths = logStrengths
    }

    /// The strength of `system`, nil when it is not one of `systems`.
    package func strength(of system: String) -> Double? {
        systems.firstIndex(of: system).map { strengths[$0] }
    }

    /// The model's probability that `a` beats `b` in a decisive game.
    package func probability(_ a: String, beats b: String) -> Double {
        guard let sa = strength(of: a), let sb = strength(of: b) else { return .nan }
        return 1 / (1 + exp(sb - sa))
    }

    /// Hunter's condition for a finite maximum: in every split of the systems into two groups,
    /// some system in each group scored (won or tied) against one in the other. That is, the
    /// "scored against" graph is strongly connected.
    private static func everyGroupScoresAgainstTheRest(_ wins: [[Double]]) -> Bool {
        let k = wins.count
        func reachesAll(_ edge: (Int, Int) -> Bool) -> Bool {
            var seen = [Bool](repeating: false, count: k)
            var stack = [0]
            seen[0] = true
            while let i = stack.popLast() {
                for j in 0..<k where !seen[j] && edge(i, j) {
                    seen[j] = true
                    stack.append(j)
                }
            }
            return seen.allSatisfy { $0 }
        }
        return reachesAll { wins[$0][$1] > 0 } && reachesAll { wins[$1][$0] > 0 }
    }
}

/// How often one system beat another head to head: wins, losses and ties of `system` over
/// `opponent`, and rate = (wins + ties / 2) / games with a Wilson interval on it. A tie counts
/// as half a win, so the Wilson formula gets a non-integer success count (statsmodels'
/// `proportion_confint(wins + ties / 2, n, method="wilson")` accepts the same).
package struct WinRate: Hashable, Sendable, Codable {
    package var system: String
    package var opponent: String
    package var wins: Int
    package var losses: Int
    package var ties: Int
    /// Games between the two.
    package var n: Int { wins + losses + ties }
    /// (wins + ties / 2) / n, Wilson interval, method "wilson"; NaN with no games.
    package var rate: Interval

    /// - Parameters:
    ///   - outcomes: verdicts as for `BradleyTerry` (1: `a` won, 0: `b` won, 0.5: tie); games
    ///     between `system` and `opponent` are counted whichever side each named first.
    package init(
        of system: String, over opponent: String, outcomes: [(a: String, b: String, score: Double)],
        confidence: Double = 0.95
    ) {
        self.system = system
        self.opponent = opponent
        var (wins, losses, ties) = (0, 0, 0)
        for outcome in outcomes {
            precondition([0, 0.5, 1].contains(outcome.score), "a verdict's score is 1, 0 or 0.5")
            let score: Double
            if outcome.a == system && outcome.b == opponent {
                score = outcome.score
            } else if outcome.a == opponent && outcome.b == system {
                score = 1 - outcome.score
            } else {
                continue
            }
            if score == 1 { wins += 1 } else if score == 0 { losses += 1 } else { ties += 1 }
        }
        (self.wins, self.losses, self.ties) = (wins, losses, ties)
        let games = wins + losses + ties
        rate =
            games == 0
            ? Interval(estimate: .nan, lower: .nan, upper: .nan, method: "wilson", n: 0)
            : Interval.wilson(
                proportion: (Double(wins) + Double(ties) / 2) / Double(games), effectiveN: Double(games), n: games,
                confidence: confidence)
    }

    /// Every ordered pair of distinct `systems` that played at least once, in `systems` order.
    package static func table(
        systems: [String], outcomes: [(a: String, b: String, score: Double)], confidence: Double = 0.95
    ) -> [WinRate] {
        systems.flatMap { system in
            systems.filter { $0 != system }.map {
                WinRate(of: system, over: $0, outcomes: outcomes, confidence: confidence)
            }
        }.filter { $0.n > 0 }
    }
}
