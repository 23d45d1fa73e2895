import CKernels
import LoupeTensor
import Synchronization

/// Attention of single query rows against cached keys and values, all heads of a row in one C
/// call (`loupe_decode_attention_part`, `Sources/CKernels/decode_attention.c`): grouped-query, so
/// each key and value row is read once for its group's query heads, with an online softmax over
/// chunks of 64 keys.
///
/// This is what a decode step runs in place of two sgemms per head and layer (540 calls a token
/// for SmolLM2-135M), and what each prompt row runs too (a prefill, a speculative draft's
/// verification), so a row's output has the same bits whether it came alone or with others. A
/// long row is split across threads by key ranges whose partial results (unnormalised output,
/// running maximum and sum per head) are merged, so a single sequence's decode uses every thread
/// too. Every instruction form gives the same bits (`decode_attention.c` says how), so the
/// answers do not depend on the CPU either.
package enum DecodeAttention {
    /// One query row and where its keys are.
    package struct Query {
        /// `heads · headSize` floats, after RoPE.
        package var query: UnsafePointer<Float>
        package var keyValues: loupe_kv_view
        /// Keys it attends to: rows [0, length) of `keyValues`.
        package var length: Int
        /// `heads · headSize` floats written.
        package var output: UnsafeMutablePointer<Float>

        package init(
            query: UnsafePointer<Float>, keyValues: loupe_kv_view, length: Int, output: UnsafeMutablePointer<Float>
        ) {
            self.query = query
            self.keyValues = keyValues
            self.length = length
            self.output = output
        }
    }

    /// Fewest keys a part of a split row gets: below this a thread's share costs more than its
    /// keys.
    static let keysPerPart = 256
    /// Most parts a row is split in.
    static let maxParts = 8

    /// How many parts a row of `length` keys is split in: a power of two (so 2 or 4 threads share
    /// them evenly) that depends on the length only, never on the threads, so a row's output has
    /// the same bits however many threads run it.
    static func parts(length: Int) -> Int {
        var parts = 1
        while parts < maxParts && length / (2 * parts) >= keysPerPart { parts *= 2 }
        return parts
    }

    private static let chosen = Atomic<UInt32>(LOUPE_ISA_AVX512.rawValue)

    /// The widest form the kernel runs in: the widest the CPU has unless narrowed (to compare the
    /// forms, which give the same bits). A form the CPU lacks selects the widest narrower one.
    package static var widest: loupe_isa {
        get { loupe_isa(rawValue: chosen.load(ordering: .relaxed)) }
        set { chosen.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// The form the kernel runs for heads of `headSize`, given `widest`.
    package static func usableForm(headSize: Int, widest: loupe_isa = DecodeAttention.widest) -> loupe_isa {
        loupe_decode_attention_usable(headSize, widest)
    }

    /// Attends every query, spreading rows and the key ranges of long rows (``parts(length:)``)
    /// over `threads`.
    ///
    /// - Parameters:
    ///   - heads: query heads per row; `keyValueHeads` divides it (query head h reads key/value
    ///     head h / (heads / keyValueHeads)).
    ///   - widest: the widest instruction form to use (``widest`` by default).
    package static func attend(
        _ queries: [Query], heads: Int, keyValueHeads: Int, headSize: Int, threads: Int,
        widest: loupe_isa = DecodeAttention.widest
    ) {
        // A prompt's rows go a batch at a time, so the parts' scratch stays small however long
        // the prompt (each row's arithmetic is its own: batching changes no bits). A decode
        // step's row goes as it is, with no copy of the array.
        guard queries.count > rowsPerCall else {
            return attendBatch(
                queries, heads: heads, keyValueHeads: keyValueHeads, headSize: headSize, threads: threads,
                widest: widest)
        }
        for start in stride(from: 0, to: queries.count, by: rowsPerCall) {
            attendBatch(
                Array(queries[start..<min(queries.count, start + rowsPerCall)]), heads: heads,
                keyValueHeads: keyValueHeads,
                headSize: headSize, threads: threads, widest: widest)
        }
    }

    /// Most query rows one split across threads covers.
    static let rowsPerCall = 64

    private static func attendBatch(
        _ queries: [Query], heads: Int, keyValueHeads: Int, headSize: Int, threads: Int, widest: loupe_isa
    ) {
        guard !queries.isEmpty else { return }
        let scale = 1 / Float(headSize).squareRoot()
        var parts: [(query: Int, begin: Int, end: Int)] = []
        parts.reserveCapacity(queries.count * maxParts)
        for (index, query) in queries.enumerated() {
            let pieces = Self.parts(length: query.length)
            let step = (query.length + pieces - 1) / max(1, pieces)
            var begin = 0
            repeat {
                let end = min(query.length, begin + step)
                parts.append((index, begin, end))
                begin = end
            } while begin < query.length
        }
        let width = heads * headSize
        let stride = width + 2 * heads  // each part's o, then m, then l
        withUnsafeTemporaryAllocation(of: Float.self, capacity: parts.count * stride) { scratch in
            let base = scratch.baseAddress!
            let run = { (index: Int) in
                let part = parts[index]
                let query = queries[part.query]
                let o = base + index * stride
                withUnsafePointer(to: query.keyValues) { view in
                    loupe_decode_attention_part(
                        view, heads, keyValueHeads, headSize, query.query, scale, part.begin, part.end, o, o + width,
                        o + width + heads, widest)
                }
            }
            CPUKernels.splitRows(parts.count, threads: threads, granularity: 1) { start, count in
                for index in start..<(start + count) { run(index) }
            }
            var first = 0
            while first < parts.count {
                var last = first
                while last + 1 < parts.count && parts[last + 1].query == parts[first].query { last += 1 }
                let count = last - first + 1
                // The parts' o, m and l sit interleaved per part; merge wants each array contiguous.
                withUnsafeTemporaryAllocation(of: Float.self, capacity: count * stride) { gathered in
                    let o = gathered.baseAddress!
                    let m = o + count * width
                    let l = m + count * heads
                    for p in 0..<count {
                        let source = base + (first + p) * stride
                        (o + p * width).update(from: source, count: width)
                        (m + p * heads).update(from: source + width, count: heads)
                        (l + p * heads).update(from: source + width + heads, count: heads)
                    }
                    loupe_decode_attention_merge(count, heads, headSize, o, m, l, queries[parts[first].query].output)
                }
                first = last + 1
            }
        }
    }
}
