import Dispatch
import Foundation

/// `items.map(transform)` over every core, in order; the first error (by position) is thrown.
/// For work whose items are independent and not tiny (parsing lines, building rows).
///
/// - Parameter serialBelow: fewer items than this are mapped here, on the caller's thread: for
///   a handful the hand-off to other threads costs more than it saves.
package func parallelMap<T: Sendable, R: Sendable, E: Error>(
    _ items: [T], serialBelow: Int = 2, _ transform: @Sendable (T) throws(E) -> R
) throws(E) -> [R] {
    let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, items.count))
    guard workers > 1, items.count >= serialBelow else { return try items.map(transform) }
    let slots = Slots<Result<[R], E>>(count: workers)
    let chunk = (items.count + workers - 1) / workers
    DispatchQueue.concurrentPerform(iterations: workers) { worker in
        let range = (worker * chunk)..<min(items.count, (worker + 1) * chunk)
        var out: [R] = []
        out.reserveCapacity(range.count)
        do {
            for index in range { out.append(try transform(items[index])) }
            slots.set(worker, .success(out))
        } catch let error as E {
            slots.set(worker, .failure(error))
        } catch {
            fatalError("unreachable: typed throws")
        }
    }
    var results: [R] = []
    results.reserveCapacity(items.count)
    for worker in 0..<workers { results += try slots.take(worker).get() }
    return results
}

/// One slot per worker, each written by its worker only (under `lock`), read after
/// `concurrentPerform` returns, which orders every write before the reads.
private final class Slots<Value>: @unchecked Sendable {
    private var values: [Value?]
    private let lock = NSLock()

    init(count: Int) { values = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ value: Value) {
        lock.lock()
        values[index] = value
        lock.unlock()
    }

    func take(_ index: Int) -> Value { values[index]! }
}
