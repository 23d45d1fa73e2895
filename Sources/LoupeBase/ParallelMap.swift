import Dispatch
import Foundation
import Synchronization

/// `items.map(transform)` over every core, in order; the first error (by position) is thrown.
/// For work whose items are independent and not tiny (parsing lines, building rows).
///
/// Each worker takes the next item not yet taken, so one holding the large items does not leave
/// the others waiting (the lines of a trace export differ in size tenfold; split into one run of
/// lines per core, a core sat idle for a quarter of an import). After an item fails, those behind
/// it are not started.
///
/// - Parameter serialBelow: fewer items than this are mapped here, on the caller's thread: for
///   a handful the hand-off to other threads costs more than it saves.
package func parallelMap<T: Sendable, R: Sendable, E: Error>(
    _ items: [T], serialBelow: Int = 2, _ transform: @Sendable (T) throws(E) -> R
) throws(E) -> [R] {
    let workers = max(1, min(ProcessInfo.processInfo.activeProcessorCount, items.count))
    guard workers > 1, items.count >= serialBelow else { return try items.map(transform) }
    let results = Results<R, E>(count: items.count)
    DispatchQueue.concurrentPerform(iterations: workers) { _ in
        while let index = results.claim() {
            do {
                results.set(index, .success(try transform(items[index])))
            } catch let error as E {
                results.set(index, .failure(error))
                results.failed(at: index)
            } catch {
                fatalError("unreachable: typed throws")
            }
        }
    }
    return try results.collect()
}

/// A result per item, each written by the one worker that claimed it, read after
/// `concurrentPerform` returns (which orders every write before the reads).
private final class Results<R, E: Error>: @unchecked Sendable {
    private let slots: PositionSlots<Result<R, E>>
    private let next = Atomic<Int>(0)
    /// The least position that failed so far (`Int.max` while none has).
    private let firstFailure = Atomic<Int>(.max)

    init(count: Int) { slots = PositionSlots(count: count) }

    /// The next position to map; nil when all are taken or the rest come after a failure.
    func claim() -> Int? {
        let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
        return index < slots.count && index < firstFailure.load(ordering: .relaxed) ? index : nil
    }

    func set(_ index: Int, _ result: Result<R, E>) { slots[index] = result }

    func failed(at index: Int) { firstFailure.min(index, ordering: .relaxed) }

    /// Every result in order, or the first failure. Every position before the first failure
    /// was claimed (claims go in order), so each has its result.
    func collect() throws(E) -> [R] {
        var out: [R] = []
        out.reserveCapacity(slots.count)
        for index in 0..<slots.count {
            guard let result = slots[index] else { preconditionFailure("item \(index) was never mapped") }
            out.append(try result.get())
        }
        return out
    }
}
