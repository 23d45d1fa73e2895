import LoupeKit
import LoupeStore

extension ProfilesPanel {
    /// The workspace's profiles.
    package struct ListProfiles: PortRequest {
        package init() {}

        package func ask(_ port: ProfilesBrowser) throws -> ProfilesBrowser.Listing { try port.list() }
    }

    /// One profile with its timeline lanes.
    package struct OpenProfile: PortRequest {
        package var id: Int64

        package init(id: Int64) { self.id = id }

        package func ask(_ port: ProfilesBrowser) throws -> ProfilesBrowser.Opened { try port.open(id) }
    }

    /// The open profile's report over HTA's default window or every step: a job, as the first
    /// time it reads every event.
    package struct ProfileReportRequest: PortRequest {
        package var id: Int64
        package var allSteps: Bool

        package init(id: Int64, allSteps: Bool = false) {
            self.id = id
            self.allSteps = allSteps
        }

        package var jobTitle: String? { "analysing profile \(id)" + (allSteps ? " (all steps)" : "") }

        package func ask(_ port: ProfilesBrowser) throws -> ProfileReport { try port.report(id, allSteps: allSteps) }

        package func ask(_ port: ProfilesBrowser, reporter: JobReporter) throws -> ProfileReport {
            try port.report(id, allSteps: allSteps, reporter: reporter)
        }
    }

    /// The events of the open profile's lanes in a window.
    package struct TimelineDetail: PortRequest {
        package var id: Int64
        package var window: ClosedRange<Int64>

        package init(id: Int64, window: ClosedRange<Int64>) {
            self.id = id
            self.window = window
        }

        package func ask(_ port: ProfilesBrowser) throws -> ProfilesBrowser.Detail {
            try port.detail(id, window: window)
        }
    }

    /// A lane's next or previous event, from the selected one or from a time.
    package struct StepEvent: PortRequest {
        package var id: Int64
        package var lane: Int
        package var from: ProfilesBrowser.Event?
        package var time: Int64
        package var forward: Bool

        package init(id: Int64, lane: Int, from: ProfilesBrowser.Event?, time: Int64, forward: Bool) {
            self.id = id
            self.lane = lane
            self.from = from
            self.time = time
            self.forward = forward
        }

        package func ask(_ port: ProfilesBrowser) throws -> ProfilesBrowser.Event? {
            try port.step(id, lane: lane, from: from, time: time, forward: forward)
        }
    }

    /// What the selected event's `args` say of its launch (grid, block, registers…).
    package struct LaunchSummary: PortRequest {
        package var id: Int64
        package var rank: Int
        package var index: Int

        package init(id: Int64, rank: Int, index: Int) {
            self.id = id
            self.rank = rank
            self.index = index
        }

        package func ask(_ port: ProfilesBrowser) throws -> String? {
            try port.launchSummary(id, rank: rank, index: index)
        }
    }

    /// The open profile against the baseline, both over the same choice of steps.
    package struct CompareProfiles: PortRequest {
        package var before: Int64
        package var after: Int64
        package var allSteps: Bool

        package init(before: Int64, after: Int64, allSteps: Bool = false) {
            self.before = before
            self.after = after
            self.allSteps = allSteps
        }

        package func ask(_ port: ProfilesBrowser) throws -> ProfileComparison {
            try port.compare(before: before, after: after, allSteps: allSteps)
        }
    }
}
