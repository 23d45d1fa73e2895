import Foundation

/// One point of a bandwidth sweep: a working-set size and the bandwidth measured there.
package struct BandwidthSample: Hashable, Sendable, Codable {
    package var workingSetBytes: Int
    package var gigabytesPerSecond: Double

    package init(workingSetBytes: Int, gigabytesPerSecond: Double) {
        self.workingSetBytes = workingSetBytes
        self.gigabytesPerSecond = gigabytesPerSecond
    }
}

extension BandwidthSample {
    /// A sweep as `roofline measure` stores it in `machine_profiles.sweep_json` (snake_case keys).
    package static func sweep(fromJSON json: String) throws -> [BandwidthSample] {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try decoder.decode([BandwidthSample].self, from: Data(json.utf8))
    }
}
