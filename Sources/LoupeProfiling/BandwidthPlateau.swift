import Foundation

/// A flat stretch of a bandwidth sweep: one memory level's ceiling.
package struct BandwidthPlateau: Hashable, Sendable, Codable {
    /// L1, L2, L3 or DRAM, by order: the largest working sets are DRAM's. (Not by the cache
    /// sizes the OS reports: a virtual machine's sysfs can understate the real L3.)
    package var level: String
    /// The plateau's median bandwidth.
    package var gigabytesPerSecond: Double
    /// The working-set sizes it spans.
    package var smallestBytes: Int
    package var largestBytes: Int
    package var samples: Int

    package init(level: String, gigabytesPerSecond: Double, smallestBytes: Int, largestBytes: Int, samples: Int) {
        self.level = level
        self.gigabytesPerSecond = gigabytesPerSecond
        self.smallestBytes = smallestBytes
        self.largestBytes = largestBytes
        self.samples = samples
    }
}
