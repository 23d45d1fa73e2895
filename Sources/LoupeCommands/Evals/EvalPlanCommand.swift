import ArgumentParser
import Foundation
import LoupeBase
import LoupeEvals
import LoupeKit
import LoupeStore

extension EvalCommand {
    struct Plan: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Before spending money: items × epochs needed to see a difference, and what a dataset can see.",
            discussion: """
                For the paired design (two systems on the same items, compared by eval compare): the items \
                needed to detect each --difference with --power (default 0.8) at --alpha 0.05, two-sided \
                paired t-test, exact noncentral-t power; and the minimum detectable effect with --items \
                (default: the baseline's). From a --baseline run the pass rate (or the score's spread) and, \
                with several epochs, the correlation between an item's epochs are measured; otherwise give \
                --pass-rate and --icc. --correlation is how alike the two systems' outcomes on an item are.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "A run to plan from (its first scorer, or --scorer).") var baseline: Int64?
        @Option(help: "The scorer of the baseline run.") var scorer: String?
        @Option(help: "Assumed pass rate of the baseline (without --baseline).") var passRate: Double?
        @Option(help: "Correlation of the two systems' outcomes on an item.") var correlation = 0.5
        @Option(help: "Correlation between epochs of one item (default: measured, else 0.5).") var icc: Double?
        @Option(help: "Epochs per item (default: the baseline's, else 1).") var epochs: Int?
        @Option(help: "Items in the dataset (default: the baseline's).") var items: Int?
        @Option(help: "Differences to detect, comma-separated.") var difference = "0.02,0.05,0.1"
        @Option(help: "Target power.") var power = 0.8
        @Option(help: "Significance level (two-sided).") var alpha = 0.05

        func run(in context: CommandContext) throws {
            guard (0.5..<1).contains(power) else { throw CommandFailure("--power is between 0.5 and 1") }
            guard alpha > 0, alpha < 0.5 else { throw CommandFailure("--alpha is between 0 and 0.5") }
            guard (-1...1).contains(correlation) else { throw CommandFailure("--correlation is between -1 and 1") }
            if let icc, !(0...1).contains(icc) { throw CommandFailure("--icc is between 0 and 1") }
            if let epochs, epochs < 1 { throw CommandFailure("--epochs must be at least 1") }
            let differences = try difference.split(separator: ",").map { word -> Double in
                guard let value = Double(word.trimmingCharacters(in: .whitespaces)), value > 0, value < 1 else {
                    throw CommandFailure("--difference \(word): a number between 0 and 1")
                }
                return value
            }
            var rate = passRate
            var scoreSD: Double?
            var binary = true
            var measuredICC: Double?
            var baselineEpochs = 1
            var baselineItems: Int?
            if let baseline {
                let service = try EvalCommand.service(context, access: .read)
                let rows = try EvalCommand.plainly { try service.scoredRows(run: baseline) }
                let listing = try EvalCommand.plainly { try service.detail(baseline) }.listing
                let name = scorer ?? listing.scorers.first ?? ""
                guard let summary = listing.summary.scorers.first(where: { $0.scorer == name }) else {
                    throw CommandFailure("run \(baseline) has no scorer \(name)")
                }
                binary = summary.binary
                var byItem: [String: [Double]] = [:]
                for row in rows { if let value = row.values[name] { byItem[row.itemID, default: []].append(value) } }
                let itemMeans = byItem.values.map { $0.reduce(0, +) / Double($0.count) }
                rate = rate ?? summary.interval.estimate
                baselineItems = byItem.count
                baselineEpochs = byItem.values.map(\.count).max() ?? 1
                let all = byItem.values.flatMap { $0 }
                scoreSD = Self.sd(all)
                if baselineEpochs > 1 { measuredICC = Self.icc(Array(byItem.values)) }
                context.print(
                    "baseline run \(baseline) · \(UntrustedText.sanitized(name)): "
                        + String(format: "mean %.3f", summary.interval.estimate)
                        + " over \(Formatting.count(itemMeans.count, "item")) × \(Formatting.count(baselineEpochs, "epoch"))"
                        + (measuredICC.map { String(format: ", epochs of an item correlate %.2f", $0) } ?? ""))
            }
            guard let rate, (0...1).contains(rate) else {
                throw CommandFailure("give --baseline RUN, or --pass-rate P (between 0 and 1)")
            }
            let k = epochs ?? baselineEpochs
            let rho = icc ?? measuredICC ?? 0.5
            let n = items ?? baselineItems
            context.print(
                "paired design · \(Formatting.count(k, "epoch")) per item · "
                    + (k > 1 ? String(format: "epoch correlation %.2f · ", rho) : "")
                    + String(format: "systems correlate %.2f · power %.2f · α %.3f", correlation, power, alpha))
            context.print("difference   sd of differences   items needed   answers (items × epochs)")
            for d in differences {
                let sd = Self.sdOfDifferences(
                    binary: binary, rate: rate, difference: d, scoreSD: scoreSD, correlation: correlation)
                let adjusted = PowerPlan.epochAdjustedSD(sd: sd, epochs: k, intraItemCorrelation: rho)
                guard adjusted > 0 else {
                    context.print(String(format: "%+10.3f   the outcomes never differ: any 2 items show it", d))
                    continue
                }
                let needed = PowerPlan.itemsNeeded(difference: d, sdOfDifferences: adjusted, alpha: alpha, power: power)
                context.print(
                    String(format: "%+10.3f   %17.3f   %12d   %d", d, adjusted, needed, needed * k))
            }
            if let n, n >= 2 {
                let sd = Self.sdOfDifferences(
                    binary: binary, rate: rate, difference: 0, scoreSD: scoreSD, correlation: correlation)
                let adjusted = PowerPlan.epochAdjustedSD(sd: sd, epochs: k, intraItemCorrelation: rho)
                if adjusted > 0 {
                    let mde = PowerPlan.minimumDetectableEffect(
                        n: n, sdOfDifferences: adjusted, alpha: alpha, power: power)
                    context.print(
                        String(
                            format: "with %d items × %@ the smallest difference seen with power %.2f is %.3f",
                            n, Formatting.count(k, "epoch"), power, mde))
                }
            }
        }

        /// The sd of one item's B − A: from the pass rates for pass/fail scores, else from the
        /// baseline's spread of scores (both systems alike, correlated as given).
        static func sdOfDifferences(
            binary: Bool, rate: Double, difference: Double, scoreSD: Double?, correlation: Double
        ) -> Double {
            if !binary, let scoreSD { return scoreSD * (2 * (1 - correlation)).squareRoot() }
            return PowerPlan.sdOfPairedDifferences(
                passRateA: rate, passRateB: min(1, max(0, rate + difference)), correlation: correlation)
        }

        static func sd(_ values: [Double]) -> Double {
            guard values.count > 1 else { return 0 }
            let mean = values.reduce(0, +) / Double(values.count)
            return (values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(values.count - 1)).squareRoot()
        }

        /// ICC(1) from one-way ANOVA over items (groups of epochs): (MSB − MSW) / (MSB + (k − 1) MSW),
        /// k the mean group size; cut to [0, 1].
        static func icc(_ groups: [[Double]]) -> Double? {
            let groups = groups.filter { $0.count >= 2 }
            guard groups.count >= 2 else { return nil }
            let all = groups.flatMap { $0 }
            let grand = all.reduce(0, +) / Double(all.count)
            var between = 0.0
            var within = 0.0
            for group in groups {
                let mean = group.reduce(0, +) / Double(group.count)
                between += Double(group.count) * (mean - grand) * (mean - grand)
                within += group.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
            }
            let msb = between / Double(groups.count - 1)
            let msw = within / Double(all.count - groups.count)
            let k = Double(all.count) / Double(groups.count)
            guard msb + (k - 1) * msw > 0 else { return nil }
            return min(1, max(0, (msb - msw) / (msb + (k - 1) * msw)))
        }
    }
}
