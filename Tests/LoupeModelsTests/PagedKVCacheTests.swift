import Testing

@testable import LoupeModels

/// The paged key/value cache's allocator and block tables: no block leaks or is freed twice,
/// shared prefix blocks are reused and never written, and rows read back as written.
@Suite struct PagedKVCacheTests {
    /// SplitMix64: the same operations on every run.
    private struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// The row stored for `token` at `position` in `layer` (exact in half precision).
    private func row(_ token: Int32, _ position: Int, _ layer: Int, value: Bool) -> [Float] {
        [Float(token), Float(position % 1024), Float(layer) + (value ? 0.5 : 0)]
    }

    /// Appends `tokens` to sequence `id` as a model step would: reserve, write every layer, commit.
    private func append(_ cache: PagedKVCache, _ id: Int, _ tokens: [Int32]) throws {
        try cache.reserve(id, tokens: tokens.count)
        let start = cache.sequences[id]!.count
        for (offset, token) in tokens.enumerated() {
            for layer in 0..<cache.layers {
                let key = row(token, start + offset, layer, value: false)
                let value = row(token, start + offset, layer, value: true)
                cache.write(id, layer: layer, position: start + offset, key: key, value: value)
            }
        }
        try cache.commit(id, tokens: tokens)
    }

    /// Every reference count equals the tables holding the block; free and held blocks add up.
    private func expectConsistent(_ cache: PagedKVCache, _ comment: Comment) {
        var holders = [Int](repeating: 0, count: cache.allocator.blockCount)
        for sequence in cache.sequences.values {
            #expect(
                sequence.blocks.count == (sequence.count + cache.blockRows - 1) / cache.blockRows
                    || sequence.blocks.count > sequence.count / cache.blockRows, comment)
            for block in sequence.blocks { holders[Int(block)] += 1 }
        }
        #expect(holders == cache.allocator.references, comment)
        #expect(cache.allocator.freeCount + holders.filter { $0 > 0 }.count == cache.allocator.blockCount, comment)
    }

    /// Every stored row of every sequence is the one written for its token and position.
    private func expectRows(_ cache: PagedKVCache, _ comment: Comment) {
        for (id, sequence) in cache.sequences {
            for (position, token) in sequence.tokens.enumerated() {
                for layer in 0..<cache.layers {
                    #expect(
                        cache.row(id, layer: layer, position: position) == row(token, position, layer, value: false),
                        "\(comment): key of sequence \(id) at \(position)")
                    #expect(
                        cache.row(id, layer: layer, position: position, values: true)
                            == row(token, position, layer, value: true), "\(comment): value of \(id) at \(position)")
                }
            }
        }
    }

    @Test func randomJoinsExtensionsForksAndLeavesNeverLeakOrDoubleFree() throws {
        var random = SeededGenerator(state: 59)
        let cache = PagedKVCache(layers: 2, rowWidth: 3, blockCount: 48, blockRows: 4)
        // Prompts start with one of a few system prompts so prefixes are shared.
        let systems: [[Int32]] = [Array(1...9), Array(100...107), []]
        var nextID = 0
        var exhausted = 0
        for step in 0..<2_000 {
            let live = Array(cache.sequences.keys).sorted()
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3:
                let prompt =
                    systems.randomElement(using: &random)!
                    + (0..<Int.random(in: 1...6, using: &random)).map { _ in Int32.random(in: 200..<204, using: &random)
                    }
                let cached = try cache.join(nextID, prompt: prompt)
                #expect(cached < prompt.count && cached % cache.blockRows == 0)
                #expect(cache.sequences[nextID]!.tokens == Array(prompt[..<cached]))
                do { try append(cache, nextID, Array(prompt[cached...])) } catch PagedKVError.poolExhausted {
                    exhausted += 1
                    try cache.leave(nextID)
                }
                nextID += 1
            case 3..<7 where !live.isEmpty:
                let id = live.randomElement(using: &random)!
                let tokens = (0..<Int.random(in: 1...5, using: &random)).map { _ in
                    Int32.random(in: 0..<300, using: &random)
                }
                do { try append(cache, id, tokens) } catch PagedKVError.poolExhausted { exhausted += 1 }
            case 7 where !live.isEmpty:
                try cache.fork(live.randomElement(using: &random)!, into: nextID)
                nextID += 1
            case 8..<10 where !live.isEmpty:
                try cache.leave(live.randomElement(using: &random)!)
            default:
                break
            }
            expectConsistent(cache, "after step \(step)")
            if step % 50 == 0 { expectRows(cache, "after step \(step)") }
        }
        expectRows(cache, "at the end")
        #expect(exhausted > 0, "the pool never filled: the test did not reach the exhausted path")
        for id in Array(cache.sequences.keys) { try cache.leave(id) }
        #expect(cache.allocator.freeCount == 48)
        #expect(cache.allocator.references.allSatisfy { $0 == 0 })
    }

    @Test func aSharedPromptPrefixIsReusedWhileHeldAndAfterItsSequenceLeft() throws {
        let cache = PagedKVCache(layers: 1, rowWidth: 3, blockCount: 16, blockRows: 4)
        let system: [Int32] = Array(1...10)
        #expect(try cache.join(0, prompt: system + [50, 51]) == 0)
        try append(cache, 0, system + [50, 51])
        // Two whole blocks (8 tokens) of the 10 shared tokens are cached.
        #expect(try cache.join(1, prompt: system + [60]) == 8)
        #expect(Array(cache.sequences[1]!.blocks) == Array(cache.sequences[0]!.blocks.prefix(2)))
        #expect(cache.allocator.references[Int(cache.sequences[0]!.blocks[0])] == 2)
        try append(cache, 1, [9, 10, 60])
        #expect(cache.sequences[1]!.blocks[2] != cache.sequences[0]!.blocks[2])
        expectRows(cache, "two sequences")
        try cache.leave(0)
        try cache.leave(1)
        #expect(cache.allocator.freeCount == 16)
        // Freed, the prefix blocks stay cached until their room is needed.
        #expect(try cache.join(2, prompt: system + [70]) == 8)
        try append(cache, 2, [9, 10, 70])
        expectRows(cache, "after reuse")
        try cache.leave(2)
        #expect(cache.allocator.freeCount == 16)
    }

    @Test func appendingToAForkCopiesTheSharedPartlyFilledLastBlock() throws {
        let cache = PagedKVCache(layers: 2, rowWidth: 3, blockCount: 8, blockRows: 4)
        _ = try cache.join(0, prompt: [1, 2, 3, 4, 5, 6])
        try append(cache, 0, [1, 2, 3, 4, 5, 6])
        try cache.fork(0, into: 1)
        #expect(cache.sequences[1]!.blocks == cache.sequences[0]!.blocks)
        try append(cache, 1, [7])
        try append(cache, 0, [8])
        #expect(cache.sequences[1]!.blocks[0] == cache.sequences[0]!.blocks[0])
        #expect(cache.sequences[1]!.blocks[1] != cache.sequences[0]!.blocks[1])
        #expect(cache.row(0, layer: 1, position: 6) == [8, 6, 1])
        #expect(cache.row(1, layer: 1, position: 6) == [7, 6, 1])
        expectRows(cache, "forked")
        try cache.leave(1)
        try cache.leave(0)
        #expect(cache.allocator.freeCount == 8)
    }

    /// A speculative draft's rejected rows: truncating releases the blocks past the kept rows,
    /// and a kept block they had filled is no longer offered as a cached prefix (its rows are
    /// overwritten next), while a whole block before them still is; no block leaks.
    @Test func truncatingForgetsTheRejectedRowsAndTheirPrefix() throws {
        let cache = PagedKVCache(layers: 2, rowWidth: 3, blockCount: 8, blockRows: 4)
        _ = try cache.join(0, prompt: [1, 2, 3])
        try append(cache, 0, [1, 2, 3])
        try append(cache, 0, [4, 5, 6, 7, 8, 9, 10])  // 10 rows: two full blocks indexed, a third begun
        #expect(cache.sequences[0]!.blocks.count == 3)
        try cache.truncate(0, to: 6)
        #expect(cache.sequences[0]!.count == 6 && cache.sequences[0]!.blocks.count == 2)
        #expect(cache.allocator.freeCount == 6)
        try append(cache, 0, [40, 50])  // overwrite rows 6 and 7 of the second block
        expectRows(cache, "after truncating and appending")
        expectConsistent(cache, "after truncating and appending")
        // The first block's prefix is still true and shared; the second's old prefix is gone.
        #expect(try cache.join(1, prompt: [1, 2, 3, 4, 5, 6, 7, 8, 9]) == 4)
        #expect(try cache.join(2, prompt: [1, 2, 3, 4, 5, 6, 40, 50, 9]) == 8, "the rewritten block is indexed anew")
        for id in 0...2 { try cache.leave(id) }
        #expect(cache.allocator.freeCount == 8)
    }

    @Test func aFullPoolThrowsAndTakesNothing() throws {
        let cache = PagedKVCache(layers: 1, rowWidth: 3, blockCount: 2, blockRows: 4)
        _ = try cache.join(0, prompt: [1])
        #expect(throws: PagedKVError.poolExhausted(blocks: 2, blockRows: 4)) { try cache.reserve(0, tokens: 9) }
        #expect(cache.allocator.freeCount == 2)
        #expect(throws: PagedKVError.unknownSequence(7)) { try cache.leave(7) }
        #expect(throws: PagedKVError.duplicateSequence(0)) { _ = try cache.join(0, prompt: [1]) }
    }
}
