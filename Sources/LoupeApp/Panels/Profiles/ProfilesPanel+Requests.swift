import LoupeKit
import LoupeStore

extension ProfilesPanel {
    /// The workspace's profiles.
    package struct ListProfiles: PortRequest {
        package init() {}

        package func ask(_ port: ProfilesBrowser) throws -> [ProfilerTraceRecord] { try port.list() }
    }

    /// One profile with its report and timeline lanes.
    package struct OpenProfile: PortRequest {
        package var id: Int64

        package init(id: Int64) { self.id = id }

        package func ask(_ port: ProfilesBrowser) throws -> ProfilesBrowser.Opened { try port.open(id) }
    }

    /// The open profile against the baseline.
    package struct CompareProfiles: PortRequest {
        package var before: Int64
        package var after: Int64

        package init(before: Int64, after: Int64) {
            self.before = before
            self.after = after
        }

        package func ask(_ port: ProfilesBrowser) throws -> ProfileComparison {
            try port.compare(before: before, after: after)
        }
    }
}
