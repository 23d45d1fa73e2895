/// The eval runs and the suite files found beside the workspace and in sample-data/evals.
package struct EvalsOverview: Hashable, Sendable {
    package var runs: [EvalService.RunListing]
    package var suites: [String]

    package init(runs: [EvalService.RunListing], suites: [String]) {
        self.runs = runs
        self.suites = suites
    }
}
