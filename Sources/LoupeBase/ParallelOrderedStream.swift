import Dispatch
import Foundation

/// `transform` over `items` on every core, read back in order as each result is ready, so a
/// consumer on the calling thread (one SQLite writer) works while the rest are being made.
/// Results are handed over once and dropped by the stream. Call ``cancel()`` when stopping
/// early, or the workers finish the remaining items for nothing; after it, the stream ends
/// with the items already being made.
///
/// Thread-safety: every mutable field is read and written under `condition`'s lock, which is what
/// makes the unchecked conformance true.
package final class ParallelOrderedStream<R: Sendable>: Sequence, IteratorProtocol, @unchecked Sendable {
    private let condition = NSCondition()
    private var results: [R?]
    private var taken = 0
    private var claimed = 0
    private var cancelled = false

    package init<T: Sendable>(_ items: consuming [T], batch: Int = 4, _ transform: @escaping @Sendable (T) -> R) {
        results = Array(repeating: nil, count: items.count)
        // Each item is let go by the worker that transformed it, on its own core: dropped all at
        // once by the caller, a trace import's parsed traces took a core a third of a second to
        // free, after everything else was done.
        let pending = PositionSlots(consume items)
        let workers = Swift.max(1, Swift.min(ProcessInfo.processInfo.activeProcessorCount, results.count))
        for _ in 0..<workers {
            DispatchQueue.global(qos: .userInitiated).async { [self] in
                while let range = claim(batch) {
                    // A position is claimed once, so its item is there to take.
                    let made = range.map { transform(pending.take($0)!) }
                    condition.lock()
                    for (index, value) in zip(range, made) { results[index] = value }
                    condition.broadcast()
                    condition.unlock()
                }
            }
        }
    }

    private func claim(_ batch: Int) -> Range<Int>? {
        condition.lock()
        defer { condition.unlock() }
        guard !cancelled, claimed < results.count else { return nil }
        let range = claimed..<Swift.min(results.count, claimed + batch)
        claimed = range.upperBound
        return range
    }

    package func next() -> R? {
        condition.lock()
        defer { condition.unlock() }
        guard taken < results.count else { return nil }
        while results[taken] == nil {
            // Cancelled, and nobody holds this item: it will never come.
            if cancelled && taken >= claimed { return nil }
            condition.wait()
        }
        let value = results[taken]
        results[taken] = nil
        taken += 1
        return value
    }

    /// Stops the workers after the items they hold.
    package func cancel() {
        condition.lock()
        cancelled = true
        condition.unlock()
    }
}
