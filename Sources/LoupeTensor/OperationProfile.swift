import Glibc
import Synchronization

/// Time, FLOPs and bytes moved per kind of operation, accumulated over a run: what a roofline
/// needs to place each kernel (GFLOP/s against FLOP/byte).
///
/// FLOPs and bytes are analytic (from the shapes, Float32 = 4 bytes, each operand read once
/// and each result written once), not hardware counters. Thread-safety: any thread (batches run
/// concurrently).
package final class OperationProfile: Sendable {
    /// One kind of operation, summed over its calls.
    package struct Entry: Hashable, Sendable {
        package var name: String
        package var calls: Int
        package var nanoseconds: UInt64
        package var flops: Double
        package var bytes: Double

        /// Achieved GFLOP/s.
        package var gflopsPerSecond: Double { nanoseconds == 0 ? 0 : flops / Double(nanoseconds) }
        /// Arithmetic intensity, FLOP per byte.
        package var flopsPerByte: Double { bytes == 0 ? 0 : flops / bytes }
    }

    private let entries = Mutex<[String: Entry]>([:])

    package init() {}

    /// Runs `body`, adding its wall time and the given work to the entry `name`.
    @inline(__always)
    package func measure<T>(_ name: String, flops: Double, bytes: Double, _ body: () -> T) -> T {
        let start = OperationProfile.now()
        let result = body()
        let elapsed = OperationProfile.now() - start
        entries.withLock { table in
            var entry = table[name] ?? Entry(name: name, calls: 0, nanoseconds: 0, flops: 0, bytes: 0)
            entry.calls += 1
            entry.nanoseconds += elapsed
            entry.flops += flops
            entry.bytes += bytes
            table[name] = entry
        }
        return result
    }

    /// The entries, most time first.
    package var entriesByTime: [Entry] {
        entries.withLock { Array($0.values) }.sorted { $0.nanoseconds > $1.nanoseconds }
    }

    private static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}

extension OperationProfile {
    /// `measure` when a profile is given, a plain call otherwise.
    @inline(__always)
    package static func measure<T>(
        _ profile: OperationProfile?, _ name: String, flops: Double, bytes: Double, _ body: () -> T
    ) -> T {
        guard let profile else { return body() }
        return profile.measure(name, flops: flops, bytes: bytes, body)
    }
}
