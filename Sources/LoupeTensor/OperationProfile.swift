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

        package init(name: String, calls: Int, nanoseconds: UInt64, flops: Double, bytes: Double) {
            self.name = name
            self.calls = calls
            self.nanoseconds = nanoseconds
            self.flops = flops
            self.bytes = bytes
        }

        /// Achieved GFLOP/s.
        package var gflopsPerSecond: Double { nanoseconds == 0 ? 0 : flops / Double(nanoseconds) }
        /// Arithmetic intensity, FLOP per byte.
        package var flopsPerByte: Double { bytes == 0 ? 0 : flops / bytes }
    }

    /// One call, when calls are kept (``init(keepingCalls:)``): an operation, or a scope such as
    /// a layer that holds the operations run inside it. Times are on the monotonic clock.
    package struct Call: Hashable, Sendable {
        package var name: String
        package var startNs: UInt64
        package var endNs: UInt64
        /// A scope (a layer) holds operations; it adds nothing to ``entriesByTime``.
        package var isScope: Bool
        package var flops: Double
        package var bytes: Double
    }

    private let entries = Mutex<[String: Entry]>([:])
    private let log = Mutex<[Call]>([])
    private let keepsCalls: Bool

    /// - Parameter keepingCalls: also keep every call with its start and end (``calls``), for a
    ///   trace's spans; the totals alone otherwise.
    package init(keepingCalls: Bool = false) {
        keepsCalls = keepingCalls
    }

    /// Every call in the order it ended (scopes after the operations inside them); empty unless
    /// the profile keeps calls.
    package var calls: [Call] { log.withLock { $0 } }

    /// The monotonic clock the calls are timed on, in nanoseconds.
    package static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Runs `body` as a scope named `name` (a layer): its time is kept as a call when calls are
    /// kept, and counted in no entry (the operations inside it are).
    package func scope<T>(_ name: String, _ body: () -> T) -> T {
        guard keepsCalls else { return body() }
        let start = OperationProfile.now()
        let result = body()
        let call = Call(
            name: name, startNs: start, endNs: OperationProfile.now(), isScope: true, flops: 0, bytes: 0)
        log.withLock { $0.append(call) }
        return result
    }

    /// Runs `body`, adding its wall time and the given work to the entry `name`.
    @inline(__always)
    package func measure<T>(_ name: String, flops: Double, bytes: Double, _ body: () -> T) -> T {
        let start = OperationProfile.now()
        let result = body()
        let end = OperationProfile.now()
        let elapsed = end - start
        if keepsCalls {
            log.withLock {
                $0.append(Call(name: name, startNs: start, endNs: end, isScope: false, flops: flops, bytes: bytes))
            }
        }
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

    /// `scope` when a profile is given, a plain call otherwise.
    @inline(__always)
    package static func scope<T>(_ profile: OperationProfile?, _ name: String, _ body: () -> T) -> T {
        guard let profile else { return body() }
        return profile.scope(name, body)
    }
}
