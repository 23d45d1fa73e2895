import Dispatch

/// The monotonic clock for benchmarks: a closure's seconds, or laps since a start.
package struct Stopwatch: Sendable {
    private var start = DispatchTime.now().uptimeNanoseconds

    package init() {}

    /// Seconds since the start (or the last lap), and a new start.
    package mutating func lap() -> Double {
        let now = DispatchTime.now().uptimeNanoseconds
        defer { start = now }
        return Double(now - start) / 1e9
    }

    /// Seconds `body` took.
    package static func seconds(_ body: () -> Void) -> Double {
        var watch = Stopwatch()
        body()
        return watch.lap()
    }
}
