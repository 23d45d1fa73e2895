import Foundation
import LoupeBase
import Synchronization

/// GPT-2's byte-level BPE, as llama.cpp and Hugging Face `tokenizers` run it for GGUF models whose
/// `tokenizer.ggml.model` is `gpt2` (SmolLM2, GPT-2, StarCoder...):
///
/// 1. special tokens: with `parseSpecial`, CONTROL tokens (`<|im_start|>`...) found in the text are
///    taken whole, leftmost first and longest at a position; USER_DEFINED tokens always are
///    (llama.cpp's `tokenizer_st_partition`). The text between them is encoded on its own;
/// 2. pre-tokenizer: the text is cut into pieces by GPT-2's regex (`smollm` first puts every
///    `\p{N}` character in a piece of its own), see `BPETokenizer+PreTokenization.swift`;
/// 3. each piece's UTF-8 bytes start as one token per byte (the vocabulary spells byte b as GPT-2's
///    printable stand-in, space as `Ġ`), and the adjacent pair with the lowest merge rank is merged
///    until no pair has a merge. Equal ranks go left first.
///
/// Encoding caches each piece's tokens, so repeated words cost a dictionary lookup. The cache is
/// behind a lock: one tokenizer may encode from several threads.
package struct BPETokenizer: Sendable {
    /// llama.cpp's token types (`tokenizer.ggml.token_type`).
    package enum TokenType: Int32, Sendable {
        case undefined = 0
        case normal = 1
        case unknown = 2
        case control = 3
        case userDefined = 4
        case unused = 5
        case byte = 6
    }

    /// How text is cut into pieces before BPE (`tokenizer.ggml.pre`).
    package enum PreTokenizer: String, Sendable, CaseIterable {
        /// GPT-2's regex alone.
        case gpt2
        /// Every `\p{N}` character on its own, then GPT-2's regex on each piece (SmolLM, SmolLM2).
        case smollm
    }

    /// The token strings, index = id, as the vocabulary spells them (bytes as GPT-2 stand-ins).
    package let tokens: [String]
    /// Each token's type; ids past the types given are `.normal`.
    package let types: [TokenType]
    package let preTokenizer: PreTokenizer
    /// Ids that end a generation: the model's eos id and any CONTROL token spelled
    /// `<|im_end|>` or `<|endoftext|>` (as llama.cpp detects end-of-generation tokens by text).
    package let endOfGenerationIDs: Set<Int32>

    /// Each token's bytes: CONTROL and USER_DEFINED tokens are their text's UTF-8.
    private let tokenBytes: [[UInt8]]
    /// The id of the token that is byte b alone, -1 where the vocabulary has none.
    private let byteIDs: [Int32]
    /// (left id << 32 | right id) → the merge's rank and the merged token's id.
    private let merges: [UInt64: Merge]
    /// Tokens matched whole before pre-tokenization, longest first.
    private let specials: [Special]
    /// Whether some special token begins with byte b (when parsing specials) and some USER_DEFINED one does.
    private let specialStarts: [Bool]
    private let alwaysStarts: [Bool]
    private let cache = PieceCache()

    private struct Merge {
        var rank: Int32
        var id: Int32
    }

    private struct Special {
        var bytes: [UInt8]
        var id: Int32
        /// USER_DEFINED tokens are matched even when special tokens are not parsed.
        var always: Bool
    }

    /// A tokenizer over `tokens` (index = id), `merges` ("left right" in rank order), and token
    /// `types` (llama.cpp's numbers; empty means all normal). `source` names the file in errors.
    ///
    /// - Throws: `ModelError` when the pre-tokenizer is unknown, no byte has a token, a merge is not
    ///   two tokens of the vocabulary, or its result is not one.
    package init(
        tokens: [String], merges: [String], types: [Int] = [], pre: String, eos: Int? = nil,
        source: String = "tokenizer"
    ) throws(ModelError) {
        func failure(_ field: String, _ message: String) -> ModelError {
            ModelError(file: source, message: "\(field): \(message)")
        }
        guard let preTokenizer = PreTokenizer(rawValue: pre) else {
            let known = PreTokenizer.allCases.map(\.rawValue).joined(separator: ", ")
            throw failure("tokenizer.ggml.pre", "unknown pre-tokenizer '\(pre)' (Loupe knows \(known))")
        }
        guard !tokens.isEmpty, tokens.count < Int32.max else {
            throw failure("tokenizer.ggml.tokens", "has \(tokens.count) tokens")
        }
        guard types.isEmpty || types.count == tokens.count else {
            throw failure("tokenizer.ggml.token_type", "has \(types.count) entries for \(tokens.count) tokens")
        }
        var tokenTypes: [TokenType] = []
        tokenTypes.reserveCapacity(tokens.count)
        for (index, type) in types.enumerated() {
            guard let known = Int32(exactly: type).flatMap(TokenType.init(rawValue:)) else {
                throw failure("tokenizer.ggml.token_type", "token \(index) has type \(type), not one of 0...6")
            }
            tokenTypes.append(known)
        }
        if types.isEmpty { tokenTypes = Array(repeating: .normal, count: tokens.count) }

        var ids: [String: Int32] = [:]
        ids.reserveCapacity(tokens.count)
        var tokenBytes: [[UInt8]] = []
        tokenBytes.reserveCapacity(tokens.count)
        var specials: [Special] = []
        for (index, token) in tokens.enumerated() {
            if ids[token] == nil { ids[token] = Int32(index) }
            switch tokenTypes[index] {
            case .control, .userDefined:
                tokenBytes.append(Array(token.utf8))
                if !token.isEmpty {
                    specials.append(
                        Special(bytes: Array(token.utf8), id: Int32(index), always: tokenTypes[index] == .userDefined))
                }
            default:
                tokenBytes.append(ByteAlphabet.bytes(of: token))
            }
        }
        // A byte without a token (SmolLM2 has none for 21 bytes, among them 0x04 and 0xF5...0xFF)
        // is left out of the text before merging, as Hugging Face's BPE does without an unknown token.
        // (llama.cpp leaves it out after merging, so its neighbours stay apart: "!\u{4}!" is [17, 17]
        // there and [10095] here; on the parity corpus, which has no such byte, the two agree.)
        let byteIDs = (0..<256).map { byte in ids[String(Character(ByteAlphabet.scalar(for: UInt8(byte))))] ?? -1 }
        guard byteIDs.contains(where: { $0 >= 0 }) else {
            throw failure("tokenizer.ggml.tokens", "has no byte tokens: not a byte-level BPE vocabulary")
        }
        var mergeTable: [UInt64: Merge] = [:]
        mergeTable.reserveCapacity(merges.count)
        for (rank, merge) in merges.enumerated() {
            let parts = merge.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let left = ids[String(parts[0])], let right = ids[String(parts[1])] else {
                throw failure("tokenizer.ggml.merges", "merge \(rank) '\(merge)' is not two tokens of the vocabulary")
            }
            guard let merged = ids[String(parts[0] + parts[1])] else {
                throw failure("tokenizer.ggml.merges", "merge \(rank) '\(merge)' makes a token not in the vocabulary")
            }
            let key = UInt64(UInt32(left)) << 32 | UInt64(UInt32(right))
            // As in Hugging Face's BPE, a pair listed twice keeps its later rank.
            mergeTable[key] = Merge(rank: Int32(clamping: rank), id: merged)
        }
        var endOfGeneration: Set<Int32> = []
        if let eos {
            guard eos >= 0 && eos < tokens.count else {
                throw failure("tokenizer.ggml.eos_token_id", "\(eos) is not a token id (0..<\(tokens.count))")
            }
            endOfGeneration.insert(Int32(eos))
        }
        for (index, token) in tokens.enumerated()
        where tokenTypes[index] == .control && (token == "<|im_end|>" || token == "<|endoftext|>") {
            endOfGeneration.insert(Int32(index))
        }
        self.tokens = tokens
        self.types = tokenTypes
        self.preTokenizer = preTokenizer
        self.endOfGenerationIDs = endOfGeneration
        self.tokenBytes = tokenBytes
        self.byteIDs = byteIDs
        self.merges = mergeTable
        self.specials = specials.sorted { $0.bytes.count > $1.bytes.count }
        var specialStarts = [Bool](repeating: false, count: 256)
        var alwaysStarts = [Bool](repeating: false, count: 256)
        for special in specials {
            specialStarts[Int(special.bytes[0])] = true
            if special.always { alwaysStarts[Int(special.bytes[0])] = true }
        }
        self.specialStarts = specialStarts
        self.alwaysStarts = alwaysStarts
    }

    /// The number of tokens.
    package var count: Int { tokens.count }

    /// Whether `id` is a CONTROL token (`<|im_start|>`...): one the text never spells unless
    /// special tokens are parsed.
    package func isControl(_ id: Int32) -> Bool {
        id >= 0 && Int(id) < types.count && types[Int(id)] == .control
    }

    /// The id of a CONTROL or USER_DEFINED token spelled `text`, if there is one.
    package func specialID(_ text: String) -> Int32? {
        let bytes = Array(text.utf8)
        return specials.first { $0.bytes == bytes }?.id
    }

    // MARK: Encoding

    /// The token ids of `text`. With `parseSpecial`, CONTROL tokens spelled in the text become
    /// their ids (for prompts a template rendered); without, they are plain text (for what a user
    /// typed). No BOS is added.
    package func encode(_ text: String, parseSpecial: Bool = false) -> [Int32] {
        var ids: [Int32] = []
        ids.reserveCapacity(text.utf8.count / 3 + 4)
        let starts = parseSpecial ? specialStarts : alwaysStarts
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            var position = 0
            while position < utf8.count {
                guard starts[Int(utf8[position])],
                    let special = special(at: position, in: utf8, parseSpecial: parseSpecial)
                else {
                    position += 1
                    continue
                }
                if start < position {
                    encodeOrdinary(UnsafeBufferPointer(rebasing: utf8[start..<position]), into: &ids)
                }
                ids.append(special.id)
                position += special.bytes.count
                start = position
            }
            if start < utf8.count { encodeOrdinary(UnsafeBufferPointer(rebasing: utf8[start...]), into: &ids) }
        }
        return ids
    }

    /// The pieces the pre-tokenizer cuts `text` into (no special tokens matched), for display and tests.
    package func pieces(_ text: String) -> [String] {
        var result: [String] = []
        var text = text
        text.withUTF8 { utf8 in
            PreTokenization.split(utf8, digitsApart: preTokenizer == .smollm) { range in
                result.append(String(decoding: UnsafeBufferPointer(rebasing: utf8[range]), as: UTF8.self))
            }
        }
        return result
    }

    private func special(at position: Int, in utf8: UnsafeBufferPointer<UInt8>, parseSpecial: Bool) -> Special? {
        for special in specials where special.always || parseSpecial {
            let bytes = special.bytes
            guard bytes[0] == utf8[position], position + bytes.count <= utf8.count else { continue }
            var matches = true
            for offset in 1..<bytes.count where utf8[position + offset] != bytes[offset] {
                matches = false
                break
            }
            if matches { return special }
        }
        return nil
    }

    /// Pre-tokenizes and BPE-encodes text that holds no special token.
    private func encodeOrdinary(_ utf8: UnsafeBufferPointer<UInt8>, into ids: inout [Int32]) {
        PreTokenization.split(utf8, digitsApart: preTokenizer == .smollm) { range in
            let piece = UnsafeBufferPointer(rebasing: utf8[range])
            if piece.count == 1 {
                let id = byteIDs[Int(piece[0])]
                if id >= 0 { ids.append(id) }
            } else if let cached = cache.lookup(piece) {
                ids.append(contentsOf: cached)
            } else {
                let merged = bytePairMerge(piece)
                cache.store(piece, merged)
                ids.append(contentsOf: merged)
            }
        }
    }

    /// One piece's tokens: its bytes' tokens, merged lowest rank first (leftmost among equal ranks)
    /// with a heap over the adjacent pairs, as Hugging Face's `Word::merge_all` does: O(n log n).
    private func bytePairMerge(_ piece: UnsafeBufferPointer<UInt8>) -> [Int32] {
        var symbols = piece.map { byteIDs[Int($0)] }
        if symbols.contains(-1) {
            symbols.removeAll { $0 < 0 }
            if symbols.isEmpty { return [] }
        }
        let count = symbols.count
        var previous = Array(-1..<(count - 1))
        var next = Array(1...count)
        next[count - 1] = -1
        var alive = [Bool](repeating: true, count: count)
        var heap = PairHeap()
        func push(_ position: Int) {
            let right = next[position]
            guard right >= 0, let merge = merges[Self.pairKey(symbols[position], symbols[right])] else { return }
            heap.push(PairHeap.Entry(rank: merge.rank, position: Int32(position), id: merge.id))
        }
        for position in 0..<(count - 1) { push(position) }
        while let top = heap.pop() {
            let position = Int(top.position)
            let right = next[position]
            // Skip entries made stale by an earlier merge: the pair there no longer makes top.id.
            guard alive[position], right >= 0, merges[Self.pairKey(symbols[position], symbols[right])]?.id == top.id
            else { continue }
            symbols[position] = top.id
            alive[right] = false
            next[position] = next[right]
            if next[right] >= 0 { previous[next[right]] = position }
            if previous[position] >= 0 { push(previous[position]) }
            push(position)
        }
        var result: [Int32] = []
        var position = 0
        while position >= 0 {
            result.append(symbols[position])
            position = next[position]
        }
        return result
    }

    private static func pairKey(_ left: Int32, _ right: Int32) -> UInt64 {
        UInt64(UInt32(bitPattern: left)) << 32 | UInt64(UInt32(bitPattern: right))
    }

    // MARK: Decoding

    /// The bytes `ids` stand for; CONTROL tokens give their text when `renderSpecial`, nothing
    /// otherwise (as llama.cpp detokenizes generated text). Ids out of range give nothing.
    package func decodeBytes(_ ids: [Int32], renderSpecial: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = []
        for id in ids { appendBytes(of: id, renderSpecial: renderSpecial, to: &bytes) }
        return bytes
    }

    /// The text `ids` stand for; byte sequences that are not UTF-8 become U+FFFD.
    package func decode(_ ids: [Int32], renderSpecial: Bool = false) -> String {
        String(decoding: decodeBytes(ids, renderSpecial: renderSpecial), as: UTF8.self)
    }

    fileprivate func appendBytes(of id: Int32, renderSpecial: Bool, to bytes: inout [UInt8]) {
        guard id >= 0, Int(id) < tokenBytes.count else { return }
        if !renderSpecial && types[Int(id)] == .control { return }
        bytes.append(contentsOf: tokenBytes[Int(id)])
    }

    /// A token's text for display: its bytes as text, each byte that is not part of valid UTF-8
    /// as `<0xAB>` (a token may hold part of a character); CONTROL tokens as their spelling.
    /// The text is raw: escape it before it reaches a terminal.
    package func piece(_ id: Int32) -> String {
        guard id >= 0, Int(id) < tokenBytes.count else { return "<invalid id \(id)>" }
        let bytes = tokenBytes[Int(id)]
        var text = ""
        var start = 0
        while start < bytes.count {
            let length = UTF8Prefix.validSequenceLength(bytes, at: start)
            if length > 0 {
                text += String(decoding: bytes[start..<(start + length)], as: UTF8.self)
                start += length
            } else {
                text += "<0x" + String(bytes[start], radix: 16, uppercase: true).leftPadded(to: 2) + ">"
                start += 1
            }
        }
        return text
    }

    /// Turns generated ids into text as they come, holding back the bytes of a character that is
    /// not complete yet (a token may end inside a multi-byte character).
    package struct StreamDecoder: Sendable {
        private let tokenizer: BPETokenizer
        private let renderSpecial: Bool
        private var pending: [UInt8] = []

        package init(_ tokenizer: BPETokenizer, renderSpecial: Bool = false) {
            self.tokenizer = tokenizer
            self.renderSpecial = renderSpecial
        }

        /// The text that `id` completes: all pending bytes but an unfinished character at the end.
        package mutating func append(_ id: Int32) -> String {
            tokenizer.appendBytes(of: id, renderSpecial: renderSpecial, to: &pending)
            let held = UTF8Prefix.incompleteSuffixLength(pending)
            let ready = pending.count - held
            guard ready > 0 else { return "" }
            let text = String(decoding: pending[..<ready], as: UTF8.self)
            pending.removeFirst(ready)
            return text
        }

        /// What is still held back, with U+FFFD for an unfinished character; the decoder is empty after.
        package mutating func finish() -> String {
            defer { pending.removeAll() }
            return String(decoding: pending, as: UTF8.self)
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

/// GPT-2's map between bytes and the printable characters the vocabulary spells them with:
/// `!`...`~`, `¡`...`¬` and `®`...`ÿ` stand for themselves, the other 68 bytes for U+0100... in order.
private enum ByteAlphabet {
    static func isSelf(_ byte: Int) -> Bool { (33...126).contains(byte) || (161...172).contains(byte) || byte >= 174 }

    static let scalars: [Unicode.Scalar] = {
        var shifted = 0
        return (0..<256).map { byte in
            if isSelf(byte) { return Unicode.Scalar(UInt8(byte)) }
            defer { shifted += 1 }
            return Unicode.Scalar(UInt32(256 + shifted))!
        }
    }()

    static let bytesByScalar: [UInt32: UInt8] = Dictionary(
        uniqueKeysWithValues: scalars.enumerated().map { ($0.element.value, UInt8($0.offset)) })

    static func scalar(for byte: UInt8) -> Unicode.Scalar { scalars[Int(byte)] }

    /// The bytes a vocabulary token stands for. A character outside the alphabet (no GPT-2
    /// vocabulary has one) stands for its own UTF-8, so such a token still decodes to its text.
    static func bytes(of token: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(token.unicodeScalars.count)
        for scalar in token.unicodeScalars {
            if let byte = bytesByScalar[scalar.value] {
                bytes.append(byte)
            } else {
                bytes.append(contentsOf: String(scalar).utf8)
            }
        }
        return bytes
    }
}

/// UTF-8 checks for streaming and display.
private enum UTF8Prefix {
    /// The length of the well-formed UTF-8 sequence at `start`, or 0 when the byte there does not
    /// begin one.
    static func validSequenceLength(_ bytes: [UInt8], at start: Int) -> Int {
        let (length, low, high) = lead(bytes[start])
        guard length > 0, start + length <= bytes.count else { return 0 }
        for offset in 1..<max(length, 1) {
            let byte = bytes[start + offset]
            let range: ClosedRange<UInt8> = offset == 1 ? low...high : 0x80...0xBF
            guard range.contains(byte) else { return 0 }
        }
        return length
    }

    /// How many bytes at the end form the valid start of a character that later bytes may finish.
    static func incompleteSuffixLength(_ bytes: [UInt8]) -> Int {
        for back in 1...min(3, bytes.count + 1) where back <= bytes.count {
            let start = bytes.count - back
            let (length, low, high) = lead(bytes[start])
            if length == 0 { continue }  // a continuation byte (or an invalid one): look further back
            guard length > back else { return 0 }
            for offset in 1..<back {
                let range: ClosedRange<UInt8> = offset == 1 ? low...high : 0x80...0xBF
                guard range.contains(bytes[start + offset]) else { return 0 }
            }
            return back
        }
        return 0
    }

    /// A lead byte's sequence length and the range its second byte must be in (Unicode table 3-7);
    /// length 0 for bytes that cannot begin a sequence.
    private static func lead(_ byte: UInt8) -> (length: Int, low: UInt8, high: UInt8) {
        switch byte {
        case 0x00...0x7F: return (1, 0, 0)
        case 0xC2...0xDF: return (2, 0x80, 0xBF)
        case 0xE0: return (3, 0xA0, 0xBF)
        case 0xED: return (3, 0x80, 0x9F)
        case 0xE1...0xEF: return (3, 0x80, 0xBF)
        case 0xF0: return (4, 0x90, 0xBF)
        case 0xF1...0xF3: return (4, 0x80, 0xBF)
        case 0xF4: return (4, 0x80, 0x8F)
        default: return (0, 0, 0)
        }
    }
}

/// Per-piece results, shared by copies of one tokenizer. Pieces of up to 7 bytes are keyed by
/// their bytes packed into an integer, so looking up a common word allocates nothing.
private final class PieceCache: Sendable {
    private struct Storage {
        var short: [UInt64: [Int32]] = [:]
        var long: [[UInt8]: [Int32]] = [:]
    }

    /// Past this many entries the cache starts over, bounding memory on endless distinct input.
    private static let capacity = 1 << 18
    private let storage = Mutex(Storage())

    func lookup(_ piece: UnsafeBufferPointer<UInt8>) -> [Int32]? {
        if let key = Self.shortKey(piece) { return storage.withLock { $0.short[key] } }
        let bytes = Array(piece)
        return storage.withLock { $0.long[bytes] }
    }

    func store(_ piece: UnsafeBufferPointer<UInt8>, _ ids: [Int32]) {
        let key = Self.shortKey(piece)
        let bytes = key == nil ? Array(piece) : []
        storage.withLock { storage in
            if storage.short.count + storage.long.count >= Self.capacity {
                storage.short.removeAll(keepingCapacity: true)
                storage.long.removeAll(keepingCapacity: true)
            }
            if let key { storage.short[key] = ids } else { storage.long[bytes] = ids }
        }
    }

    private static func shortKey(_ piece: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard piece.count <= 7 else { return nil }
        var key = UInt64(piece.count) << 56
        for (index, byte) in piece.enumerated() { key |= UInt64(byte) << (8 * index) }
        return key
    }
}

/// A min-heap of candidate merges ordered by rank, then position (leftmost first).
private struct PairHeap {
    struct Entry {
        var rank: Int32
        var position: Int32
        var id: Int32

        func precedes(_ other: Entry) -> Bool {
            rank != other.rank ? rank < other.rank : position < other.position
        }
    }

    private var entries: [Entry] = []

    mutating func push(_ entry: Entry) {
        entries.append(entry)
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> Entry? {
        guard let top = entries.first else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var best = parent
                if left < entries.count && entries[left].precedes(entries[best]) { best = left }
                if right < entries.count && entries[right].precedes(entries[best]) { best = right }
                if best == parent { break }
                entries.swapAt(parent, best)
                parent = best
            }
        }
        return top
    }
}
