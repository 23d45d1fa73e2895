import Dispatch

/// Wall-clock timing for the probes and the kernel benchmarks.
enum Stopwatch {
    /// Seconds `body` took, from the monotonic clock.
    static func seconds(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
