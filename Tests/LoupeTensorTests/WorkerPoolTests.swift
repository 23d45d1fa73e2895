import CKernels
import Dispatch
import LoupeTensor
import Synchronization
import Testing

/// `CPUKernels.splitRows` on the persistent worker pool (`Sources/CKernels/workers.c`): every item
/// exactly once, in the chunks the split promises, whether the pool runs the region or a busy pool
/// sends it to Dispatch (several callers at once, a chunk splitting again).
@Suite struct WorkerPoolTests {
    /// The (start, count) chunks one split hands out, sorted.
    private func chunks(total: Int, threads: Int, granularity: Int) -> [[Int]] {
        let seen = Mutex<[[Int]]>([])
        CPUKernels.splitRows(total, threads: threads, granularity: granularity) { start, count in
            seen.withLock { $0.append([start, count]) }
        }
        return seen.withLock { $0 }.sorted { $0[0] < $1[0] }
    }

    @Test(arguments: [(1, 2, 1), (2, 2, 1), (7, 2, 1), (46, 2, 1), (100, 3, 12), (1000, 4, 6), (37, 8, 64)])
    func everyItemOnceInWholeChunks(total: Int, threads: Int, granularity: Int) {
        let found = chunks(total: total, threads: threads, granularity: granularity)
        var next = 0
        for (index, chunk) in found.enumerated() {
            #expect(chunk[0] == next, "chunk \(index) starts at \(chunk[0]), expected \(next): \(found)")
            #expect(chunk[1] > 0)
            if index < found.count - 1 { #expect(chunk[1] % granularity == 0, "chunk \(index): \(found)") }
            next = chunk[0] + chunk[1]
        }
        #expect(next == total, "chunks cover \(next) of \(total): \(found)")
        #expect(found.count <= threads)
    }

    /// Two workers' split runs on the pool: its helper thread exists afterwards.
    @Test func aTwoThreadSplitStartsAHelper() {
        _ = chunks(total: 64, threads: 2, granularity: 1)
        #expect(loupe_workers_started() >= 1)
    }

    /// Eight callers at once, each running 300 splits that sum disjoint ranges: every sum right,
    /// whichever caller got the pool and whichever fell back.
    @Test func concurrentCallersEachGetTheirWholeRegion() {
        let wrong = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { caller in
            for round in 0..<300 {
                let total = 50 + (caller * 31 + round * 7) % 400
                let sums = UnsafeMutableBufferPointer<Int>.allocate(capacity: total)
                defer { sums.deallocate() }
                sums.initialize(repeating: 0)
                CPUKernels.splitRows(total, threads: 2 + caller % 3, granularity: 1 + round % 5) { start, count in
                    for item in start..<(start + count) { sums[item] += item + 1 }
                }
                for item in 0..<total where sums[item] != item + 1 { wrong.add(1, ordering: .relaxed) }
            }
        }
        #expect(wrong.load(ordering: .relaxed) == 0)
    }

    /// A chunk that splits again (the pool is taken by the outer region) completes, every inner
    /// item once.
    @Test func aNestedSplitCompletes() {
        let count = Atomic<Int>(0)
        CPUKernels.splitRows(4, threads: 2, granularity: 1) { start, outer in
            for _ in start..<(start + outer) {
                CPUKernels.splitRows(100, threads: 2, granularity: 1) { _, inner in
                    count.add(inner, ordering: .relaxed)
                }
            }
        }
        #expect(count.load(ordering: .relaxed) == 400)
    }
}
