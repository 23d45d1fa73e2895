import LoupeKit

extension EvalsPanel {
    /// The runs and the suite files that can be run.
    package struct LoadOverview: PortRequest {
        package init() {}

        package func ask(_ port: EvalsBrowser) throws -> EvalsOverview { try port.overview() }
    }

    /// One run's answers and scores.
    package struct LoadRun: PortRequest {
        package var id: Int64

        package init(id: Int64) {
            self.id = id
        }

        package func ask(_ port: EvalsBrowser) throws -> EvalService.RunDetail { try port.run(id) }
    }

    /// The baseline's answers, shown beside the run's when a changed item is opened from a
    /// comparison.
    package struct LoadBaselineRun: PortRequest {
        package var id: Int64

        package init(id: Int64) {
            self.id = id
        }

        package func ask(_ port: EvalsBrowser) throws -> EvalService.RunDetail { try port.run(id) }
    }

    /// A run compared with the baseline.
    package struct CompareRuns: PortRequest {
        package var baseline: Int64
        package var run: Int64

        package init(baseline: Int64, run: Int64) {
            self.baseline = baseline
            self.run = run
        }

        package func ask(_ port: EvalsBrowser) throws -> EvalService.Comparison {
            try port.compare(baseline: baseline, run: run)
        }
    }
}
