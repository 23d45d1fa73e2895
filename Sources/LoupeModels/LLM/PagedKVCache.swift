import CKernels

/// What went wrong with a paged key/value cache.
package enum PagedKVError: Error, Equatable, CustomStringConvertible {
    /// Every block of the pool is held by a running sequence.
    case poolExhausted(blocks: Int, blockRows: Int)
    /// No sequence has this id.
    case unknownSequence(Int)
    /// A sequence with this id is already running.
    case duplicateSequence(Int)

    package var description: String {
        switch self {
        case .poolExhausted(let blocks, let rows):
            "the key/value pool is full: all \(blocks) blocks of \(rows) tokens are held by running sequences"
        case .unknownSequence(let id): "no sequence \(id) in the key/value cache"
        case .duplicateSequence(let id): "sequence \(id) is already in the key/value cache"
        }
    }
}

/// The block allocator of a paged key/value cache: a fixed pool of blocks, each with a reference
/// count, and an index from token prefixes to the full blocks that cache them.
///
/// A block is free when no sequence holds it. A freed block whose rows are a known prefix keeps
/// its index entry and goes to the back of the free list, so a later prompt with that prefix (a
/// shared system prompt, say) can take it back instead of recomputing it; a plain free block goes
/// to the front and is handed out first. Taking a cached block for new rows drops its entry.
package struct PagedKVAllocator: Sendable {
    /// Token rows per block.
    package let blockRows: Int
    /// Blocks in the pool.
    package let blockCount: Int
    /// References to each block (sequences whose table holds it).
    package private(set) var references: [Int]
    /// Free blocks; plain ones at the front, cached prefixes (oldest first) after them.
    private var free: [Int32]
    /// Full blocks by the whole token prefix that ends with them.
    private var prefixes: [[Int32]: Int32] = [:]
    /// Each indexed block's key in `prefixes`.
    private var prefixOf: [Int32: [Int32]] = [:]

    package init(blockCount: Int, blockRows: Int) {
        precondition(blockCount > 0 && blockRows > 0, "a pool of \(blockCount) blocks of \(blockRows) rows")
        self.blockCount = blockCount
        self.blockRows = blockRows
        references = Array(repeating: 0, count: blockCount)
        free = (0..<Int32(blockCount)).reversed()
    }

    /// Blocks no sequence holds (cached prefixes included: they are given out when needed).
    package var freeCount: Int { free.count }

    /// A block for new rows, with one reference.
    package mutating func allocate() throws(PagedKVError) -> Int32 {
        guard let block = free.popLast() else { throw .poolExhausted(blocks: blockCount, blockRows: blockRows) }
        precondition(references[Int(block)] == 0, "block \(block) on the free list is held")
        forgetPrefix(of: block)
        references[Int(block)] = 1
        return block
    }

    /// One more reference to a held block (a sequence sharing it).
    package mutating func retain(_ block: Int32) {
        precondition(references[Int(block)] > 0, "retain of free block \(block)")
        references[Int(block)] += 1
    }

    /// Drops one reference; the last one frees the block.
    package mutating func release(_ block: Int32) {
        precondition(references[Int(block)] > 0, "double free of block \(block)")
        references[Int(block)] -= 1
        guard references[Int(block)] == 0 else { return }
        if prefixOf[block] != nil {
            free.insert(block, at: 0)  // handed out last, so its prefix lasts longest
        } else {
            free.append(block)
        }
    }

    /// Records that `block` (full) holds the rows of the last `blockRows` tokens of `prefix`.
    package mutating func register(_ block: Int32, prefix: [Int32]) {
        precondition(prefix.count % blockRows == 0 && !prefix.isEmpty, "a prefix of \(prefix.count) tokens")
        guard prefixes[prefix] == nil, prefixOf[block] == nil else { return }
        prefixes[prefix] = block
        prefixOf[block] = prefix
    }

    /// The block caching the whole-block prefix `prefix`, with a reference taken, or nil.
    package mutating func take(prefix: [Int32]) -> Int32? {
        guard let block = prefixes[prefix] else { return nil }
        if references[Int(block)] == 0 {
            guard let index = free.firstIndex(of: block) else { preconditionFailure("free block \(block) lost") }
            free.remove(at: index)
        }
        references[Int(block)] += 1
        return block
    }

    /// Drops `block`'s prefix-index entry, if it has one: its rows are about to change.
    package mutating func forget(_ block: Int32) { forgetPrefix(of: block) }

    private mutating func forgetPrefix(of block: Int32) {
        if let prefix = prefixOf.removeValue(forKey: block) { prefixes[prefix] = nil }
    }
}

/// How a paged cache stores keys and values.
package enum PagedKVPrecision: Sendable, Equatable {
    /// float32, as ``LlamaKVCache`` does: a batched sequence's logits have the same bits as the
    /// sequence's alone on the serial path (46,080 B a token for SmolLM2-135M).
    case f32
    /// IEEE halves, rounded to nearest even: half the memory, and logits within f16's rounding
    /// of the float cache's, which can flip a greedy choice on a close call.
    case f16

    /// Bytes of one element.
    package var size: Int { self == .f32 ? 4 : 2 }
}

/// Keys and values of many sequences in fixed-size blocks of one pool, each sequence reading its
/// rows through a block table (the layout `loupe_kv_view` takes), as floats or IEEE halves.
///
/// A sequence holds only the blocks its tokens fill, taken as it grows and returned when it
/// leaves: nothing is set aside for the longest answer it might give. Full blocks are indexed by
/// the token prefix they end, so a sequence whose prompt starts with rows already cached shares
/// those blocks (by reference count) and computes only the rest. A shared block is never written:
/// appending into a shared, partly filled last block first copies it (copy on write).
package final class PagedKVCache {
    /// One running sequence.
    package struct Sequence {
        /// Its block table: row t lies in `blocks[t / blockRows]`.
        package fileprivate(set) var blocks: [Int32] = []
        /// Tokens whose rows are stored.
        package fileprivate(set) var tokens: [Int32] = []
        package var count: Int { tokens.count }
    }

    package private(set) var allocator: PagedKVAllocator
    package let layers: Int
    /// Elements of one row: key/value heads × head size.
    package let rowWidth: Int
    package private(set) var sequences: [Int: Sequence] = [:]
    /// How keys and values are stored.
    package let precision: PagedKVPrecision
    private let keys: UnsafeMutableRawPointer
    private let values: UnsafeMutableRawPointer
    private var layerStride: Int { allocator.blockCount * blockStride }
    /// Elements of one block in one layer.
    package var blockStride: Int { allocator.blockRows * rowWidth }
    package var blockRows: Int { allocator.blockRows }

    /// A pool of `blockCount` blocks of `blockRows` tokens for a model of `layers` layers whose
    /// rows are `rowWidth` elements: 2 · layers · blockCount · blockRows · rowWidth elements of
    /// `precision`.
    package init(layers: Int, rowWidth: Int, blockCount: Int, blockRows: Int = 16, precision: PagedKVPrecision = .f32) {
        self.layers = layers
        self.rowWidth = rowWidth
        self.precision = precision
        allocator = PagedKVAllocator(blockCount: blockCount, blockRows: blockRows)
        let bytes = layers * blockCount * blockRows * rowWidth * precision.size
        keys = .allocate(byteCount: bytes, alignment: 64)
        values = .allocate(byteCount: bytes, alignment: 64)
        // Bound, not filled: a row is read only after it is written, and pages no block has
        // reached yet cost no memory (blocks are handed out lowest first).
        let elements = bytes / precision.size
        switch precision {
        case .f32:
            keys.bindMemory(to: Float.self, capacity: elements)
            values.bindMemory(to: Float.self, capacity: elements)
        case .f16:
            keys.bindMemory(to: UInt16.self, capacity: elements)
            values.bindMemory(to: UInt16.self, capacity: elements)
        }
    }

    /// Bytes of the whole pool, keys and values.
    package var bytes: Int { 2 * layers * layerStride * precision.size }

    deinit {
        keys.deallocate()
        values.deallocate()
    }

    /// Starts sequence `id` for `prompt`, sharing the whole blocks of its longest cached prefix;
    /// returns how many leading tokens of `prompt` are already stored (always fewer than all of
    /// them, so the last token is computed and yields logits).
    ///
    /// Any whole number of blocks will do: every row attends as a decode step does, so a prompt
    /// read after a shared prefix of any length has the bits of the prompt read whole
    /// (docs/decisions/2026-11-29-one-row-one-answer.md).
    package func join(_ id: Int, prompt: [Int32]) throws(PagedKVError) -> Int {
        guard sequences[id] == nil else { throw .duplicateSequence(id) }
        var sequence = Sequence()
        let rows = allocator.blockRows
        while (sequence.blocks.count + 1) * rows < prompt.count {
            let end = (sequence.blocks.count + 1) * rows
            guard let block = allocator.take(prefix: Array(prompt[..<end])) else { break }
            sequence.blocks.append(block)
            sequence.tokens = Array(prompt[..<end])
        }
        sequences[id] = sequence
        return sequence.count
    }

    /// Starts sequence `id` as a copy of `source` that shares all its blocks, the partly filled last
    /// one too (parallel samples of one prompt): the first row either appends there copies it.
    package func fork(_ source: Int, into id: Int) throws(PagedKVError) {
        guard let sequence = sequences[source] else { throw .unknownSequence(source) }
        guard sequences[id] == nil else { throw .duplicateSequence(id) }
        for block in sequence.blocks { allocator.retain(block) }
        sequences[id] = sequence
    }

    /// Ends sequence `id` and releases its blocks.
    package func leave(_ id: Int) throws(PagedKVError) {
        guard let sequence = sequences.removeValue(forKey: id) else { throw .unknownSequence(id) }
        for block in sequence.blocks { allocator.release(block) }
    }

    /// Makes room for `tokens` more rows of sequence `id`: takes blocks as needed and copies a
    /// shared, partly filled last block so the new rows never land in another sequence's block.
    /// On a full pool nothing is taken and `poolExhausted` is thrown.
    package func reserve(_ id: Int, tokens: Int) throws(PagedKVError) {
        guard var sequence = sequences[id] else { throw .unknownSequence(id) }
        let rows = allocator.blockRows
        let needed = (sequence.count + tokens + rows - 1) / rows - sequence.blocks.count
        let copyLast =
            tokens > 0 && sequence.count % rows != 0 && allocator.references[Int(sequence.blocks.last!)] > 1
        guard needed + (copyLast ? 1 : 0) <= allocator.freeCount else {
            throw .poolExhausted(blocks: allocator.blockCount, blockRows: rows)
        }
        if copyLast {
            let shared = sequence.blocks.removeLast()
            let copy = try allocator.allocate()
            for layer in 0..<layers {
                let size = precision.size
                let from = (layer * layerStride + Int(shared) * blockStride) * size
                let to = (layer * layerStride + Int(copy) * blockStride) * size
                (keys + to).copyMemory(from: keys + from, byteCount: blockStride * size)
                (values + to).copyMemory(from: values + from, byteCount: blockStride * size)
            }
            allocator.release(shared)
            sequence.blocks.append(copy)
        }
        for _ in 0..<max(0, needed) { sequence.blocks.append(try allocator.allocate()) }
        sequences[id] = sequence
    }

    /// Forgets the rows of sequence `id` from token `count` on (a speculative draft's rejected
    /// rest): the blocks past them are released (their rows stay true to the prefix they are
    /// indexed by), and a kept block that the forgotten rows had filled loses its index entry
    /// when the sequence holds it alone, since its next rows overwrite them; a shared one is
    /// copied before it is written, as ``reserve(_:tokens:)`` does for any shared last block.
    package func truncate(_ id: Int, to count: Int) throws(PagedKVError) {
        guard var sequence = sequences[id] else { throw .unknownSequence(id) }
        precondition(count >= 0 && count <= sequence.count, "truncate to \(count) of \(sequence.count) rows")
        guard count < sequence.count else { return }
        let rows = allocator.blockRows
        while sequence.blocks.count > (count + rows - 1) / rows {
            allocator.release(sequence.blocks.removeLast())
        }
        if count % rows != 0, let last = sequence.blocks.last, allocator.references[Int(last)] == 1 {
            allocator.forget(last)
        }
        sequence.tokens.removeLast(sequence.count - count)
        sequences[id] = sequence
    }

    /// Stores the rows (after RoPE) of token `position` of sequence `id` in `layer`; room must
    /// have been reserved and the position not yet committed.
    package func write(
        _ id: Int, layer: Int, position: Int, key: UnsafePointer<Float>, value: UnsafePointer<Float>
    ) {
        guard let sequence = sequences[id] else { preconditionFailure("write to unknown sequence \(id)") }
        precondition(position >= sequence.count, "rewrite of committed row \(position) of sequence \(id)")
        let block = sequence.blocks[position / blockRows]
        precondition(allocator.references[Int(block)] == 1, "write into shared block \(block)")
        let offset =
            (layer * layerStride + Int(block) * blockStride + (position % blockRows) * rowWidth) * precision.size
        switch precision {
        case .f32:
            (keys + offset).copyMemory(from: key, byteCount: rowWidth * 4)
            (values + offset).copyMemory(from: value, byteCount: rowWidth * 4)
        case .f16:
            loupe_float_to_half_rows(
                rowWidth, key, (keys + offset).assumingMemoryBound(to: UInt16.self), LOUPE_ISA_AVX512)
            loupe_float_to_half_rows(
                rowWidth, value, (values + offset).assumingMemoryBound(to: UInt16.self), LOUPE_ISA_AVX512)
        }
    }

    /// Copies the key and value rows [0, `count`) of sequence `id` in `layer`, as floats, into
    /// `keys` and `values` (`count · rowWidth` floats each, rows contiguous): the layout the
    /// serial cache's prefill attention reads.
    package func gather(
        _ id: Int, layer: Int, count: Int, keys keyRows: UnsafeMutablePointer<Float>,
        values valueRows: UnsafeMutablePointer<Float>
    ) {
        guard let sequence = sequences[id] else { preconditionFailure("gather of unknown sequence \(id)") }
        precondition(count <= sequence.blocks.count * blockRows, "gather of \(count) rows past the reserved ones")
        var row = 0
        for block in sequence.blocks where row < count {
            let rows = min(blockRows, count - row)
            let from = (layer * layerStride + Int(block) * blockStride) * precision.size
            for (source, target) in [(keys + from, keyRows), (values + from, valueRows)] {
                switch precision {
                case .f32:
                    (target + row * rowWidth).update(
                        from: source.assumingMemoryBound(to: Float.self), count: rows * rowWidth)
                case .f16:
                    let halves = source.assumingMemoryBound(to: UInt16.self)
                    for index in 0..<(rows * rowWidth) {
                        target[row * rowWidth + index] = loupe_half_to_float(halves[index])
                    }
                }
            }
            row += rows
        }
    }

    /// Records that the rows of `tokens` (written at the sequence's next positions) are stored,
    /// and indexes each block they fill so later prompts can share it.
    package func commit(_ id: Int, tokens: [Int32]) throws(PagedKVError) {
        guard var sequence = sequences[id] else { throw .unknownSequence(id) }
        let before = sequence.count / blockRows
        sequence.tokens += tokens
        precondition(sequence.count <= sequence.blocks.count * blockRows, "commit past the reserved rows")
        for index in before..<(sequence.count / blockRows) {
            allocator.register(sequence.blocks[index], prefix: Array(sequence.tokens[..<((index + 1) * blockRows)]))
        }
        sequences[id] = sequence
    }

    /// Calls `body` with the view of `layer` for sequence `id` (valid only inside `body`).
    package func withView<R>(_ id: Int, layer: Int, _ body: (loupe_kv_view) throws -> R) rethrows -> R {
        guard let sequence = sequences[id] else { preconditionFailure("view of unknown sequence \(id)") }
        return try sequence.blocks.withUnsafeBufferPointer { table in
            try body(
                loupe_kv_view(
                    keys: UnsafeRawPointer(keys + layer * layerStride * precision.size),
                    values: UnsafeRawPointer(values + layer * layerStride * precision.size), blocks: table.baseAddress,
                    block_rows: blockRows, block_stride: blockStride, row_stride: rowWidth,
                    type: precision == .f32 ? LOUPE_KV_F32 : LOUPE_KV_F16))
        }
    }

    /// The stored key (`values: false`) or value row of token `position`, as floats (for tests).
    package func row(_ id: Int, layer: Int, position: Int, values readValues: Bool = false) -> [Float] {
        guard let sequence = sequences[id] else { preconditionFailure("row of unknown sequence \(id)") }
        let block = sequence.blocks[position / blockRows]
        let first = layer * layerStride + Int(block) * blockStride + (position % blockRows) * rowWidth
        let base = (readValues ? values : keys) + first * precision.size
        switch precision {
        case .f32:
            return Array(UnsafeBufferPointer(start: base.assumingMemoryBound(to: Float.self), count: rowWidth))
        case .f16:
            let halves = base.assumingMemoryBound(to: UInt16.self)
            return (0..<rowWidth).map { loupe_half_to_float(halves[$0]) }
        }
    }
}
