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

    init(layers: Int, keyValueWidth: Int, capacity: Int) {
        self.capacity = capacity
        self.keyValueWidth = keyValueWidth
        keys = Array(repeating: [], count: layers)
        values = Array(repeating: [], count: layers)
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
        copy.count = count
        return copy
    }

    /// Makes room in `layer`'s keys and values for `rows` more tokens: doubling, as an array
    /// grows, but never past the context asked for. An array's own doubling left up to twice the
    /// context allocated (a 640-token context grown to 1,024 rows: 47 MB where 29.5 MB is needed).
    ///
    /// The growth copies every row into fresh pages, a page fault at a time: after a 512-token
    /// prompt, the first decode step's copy is most of `kv append`'s 0.1 ms a step (over 64
    /// steps). Reserving the whole context at the first append removed it (0.05 ms a step) but
    /// put 5.6 MB on `bench generate`'s peak RSS (the cache no longer grew into the memory the
    /// prompt's temporaries freed), most of the margin under the RSS bound; not kept.
    mutating func reserve(adding rows: Int, layer: Int) {
        let needed = keys[layer].count + rows * keyValueWidth
        guard needed > keys[layer].capacity else { return }
        let target = min(capacity * keyValueWidth, max(needed, 2 * keys[layer].capacity))
        keys[layer].reserveCapacity(target)
        values[layer].reserveCapacity(target)
    }

    /// Appends `count` tokens' keys and values to `layer`: row r's key is the `keyValueWidth`
    /// floats at `rows + r · stride`, its value the next `keyValueWidth` (the K and V columns of
    /// the fused Q·K·V rows).
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
