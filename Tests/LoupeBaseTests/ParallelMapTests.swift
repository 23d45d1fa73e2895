import Foundation
import LoupeBase
import Testing

@Suite struct ParallelMapTests {
    struct Failed: Error, Equatable { var at: Int }

    @Test func itemsOfUnevenWorkComeBackInOrder() {
        // The first items are the slow ones, as a block of a trace export's longest lines.
        let items = Array(0..<500)
        let mapped = parallelMap(items) { item in
            var sum = 0
            for i in 0..<(item < 20 ? 200_000 : 10) { sum &+= i ^ item }
            return (item, sum)
        }
        #expect(mapped.map(\.0) == items)
    }

    @Test func theFirstFailureByPositionIsThrownNotTheFirstInTime() {
        // Item 10 fails slowly, item 400 at once: the caller hears of item 10.
        #expect(throws: Failed(at: 10)) {
            try parallelMap(Array(0..<500)) { (item) throws(Failed) -> Int in
                if item == 10 {
                    Thread.sleep(forTimeInterval: 0.05)
                    throw Failed(at: 10)
                }
                if item == 400 { throw Failed(at: 400) }
                return item
            }
        }
    }

    @Test func newlinesAreCountedAtEveryOffset() {
        var random = SplitMix64(seed: 3)
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in [0x0A, 0x0B, 0x8A, 0x61][Int(random.next() % 4)] as UInt8 }
            #expect(LineBlocks.newlines(in: bytes) == bytes.filter { $0 == 0x0A }.count)
        }
    }
}
