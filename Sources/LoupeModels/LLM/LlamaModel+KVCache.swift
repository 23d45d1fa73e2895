#if canImport(Glibc)
    import Glibc
#endif

/// One sequence's keys and values, per layer, for every token the model has read so far.
///
/// Keys are stored after RoPE. Each layer's keys (and values) are row-major `[count,
/// keyValueWidth]` float32, grown as tokens arrive up to `capacity`, so a short sequence in a
/// long context holds only what it has read: 30 × 2 × 192 × 4 B = 46,080 B per token for
/// SmolLM2-135M (377 MB for all 8192 tokens of its context). Made by ``LlamaModel/makeCache(context:)``.
package struct LlamaKVCache: Sendable {
    /// Tokens read so far: the position the next token takes.
    package private(set) var count: Int = 0
    /// The most tokens the sequence may hold (the context asked for).
    package let capacity: Int
    let keyValueWidth: Int
    var keys: [[Float]]
    var values: [[Float]]
    /// Per layer, the floats of its keys' (and values') storage known to be faulted in: see
    /// ``reserve(adding:layer:)``.
    private var populated: [Int]

    init(layers: Int, keyValueWidth: Int, capacity: Int) {
        self.capacity = capacity
        self.keyValueWidth = keyValueWidth
        keys = Array(repeating: [], count: layers)
        values = Array(repeating: [], count: layers)
        populated = Array(repeating: 0, count: layers)
    }

    /// Tokens the cache can still take.
    package var remaining: Int { capacity - count }

    /// Forgets every token but the first `length` (to rewind a sequence, say, after a rejected
    /// speculative draft or to reuse a shared prompt prefix).
    package mutating func truncate(to length: Int) {
        precondition(length >= 0 && length <= count, "truncate to \(length) of \(count) tokens")
        for layer in keys.indices {
            keys[layer].removeSubrange((length * keyValueWidth)...)
            values[layer].removeSubrange((length * keyValueWidth)...)
        }
        count = length
    }

    /// The same keys and values in a context of `capacity` tokens (at least those it holds): a
    /// conversation's cache grows as its turns do.
    func resized(capacity: Int) -> LlamaKVCache {
        precondition(capacity >= count, "a context of \(capacity) for a cache of \(count) tokens")
        var copy = LlamaKVCache(layers: keys.count, keyValueWidth: keyValueWidth, capacity: capacity)
        copy.keys = keys
        copy.values = values
        copy.populated = populated
        copy.count = count
        return copy
    }

    /// Makes room in `layer`'s keys and values for `rows` more tokens, and has the pages they
    /// will be written to faulted in ahead, a batch at a time.
    ///
    /// The room is the whole context asked for, at the first append: its pages are not touched
    /// until written, so a short sequence in a long context holds (in RSS) only what it has read
    /// and ``populateAhead`` beyond, and no row is ever copied to a larger array (doubling copied
    /// every row into fresh pages, one page fault at a time, in the step that grew it). A decode
    /// step wrote 1.5 KB a layer into untouched pages, 11 page faults a step: `kv append` took
    /// 0.11 ms of an 8 ms step on a 2-core VM, 0.05 ms with `MADV_POPULATE_WRITE` (Linux 5.14)
    /// faulting in 64 KB at a call. Where it is refused, the writes fault the pages in as before.
    mutating func reserve(adding rows: Int, layer: Int) {
        let needed = keys[layer].count + rows * keyValueWidth
        let room = capacity * keyValueWidth
        if needed > keys[layer].capacity {
            keys[layer].reserveCapacity(max(needed, room))
            values[layer].reserveCapacity(max(needed, room))
            populated[layer] = keys[layer].count  // the rows copied over are in the new pages
        }
        guard needed > populated[layer] else { return }
        let end = min(keys[layer].capacity, values[layer].capacity, needed + Self.populateAhead / 4)
        Self.populate(&keys[layer], upTo: end)
        Self.populate(&values[layer], upTo: end)
        populated[layer] = end
    }

    /// Bytes past what an append needs that ``reserve(adding:layer:)`` faults in with it.
    static let populateAhead = 64 << 10

    /// Faults in the whole pages of `array`'s storage between its count and `end` floats (at most
    /// its capacity) without changing a byte.
    private static func populate(_ array: inout [Float], upTo end: Int) {
        #if os(Linux)
            array.withUnsafeMutableBufferPointer { buffer in
                // The storage's first element, however many are initialized (capacity is allocated).
                guard let base = buffer.baseAddress else { return }
                let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
                let first = UInt(bitPattern: base + buffer.count) & ~(page - 1)
                let last = UInt(bitPattern: base + end) & ~(page - 1)
                guard last > first, let start = UnsafeMutableRawPointer(bitPattern: first) else { return }
                _ = madvise(start, Int(last - first), 23)  // MADV_POPULATE_WRITE: no byte changes
            }
        #endif
    }

    /// Appends `count` tokens' keys and values to `layer`: row r's key is the `keyValueWidth`
    /// floats at `rows + r · stride`, its value the next `keyValueWidth` (the K and V columns of
    /// the fused Q·K·V rows), into pages ``reserve(adding:layer:)`` faulted in ahead.
    mutating func append(rows: UnsafePointer<Float>, count: Int, stride: Int, layer: Int) {
        reserve(adding: count, layer: layer)
        let width = keyValueWidth
        for row in 0..<count {
            let key = rows + row * stride
            keys[layer].append(contentsOf: UnsafeBufferPointer(start: key, count: width))
            values[layer].append(contentsOf: UnsafeBufferPointer(start: key + width, count: width))
        }
    }

    /// Records that `tokens` more tokens were appended to every layer.
    mutating func advance(by tokens: Int) {
        count += tokens
    }
}
