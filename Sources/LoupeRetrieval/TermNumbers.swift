import Foundation

/// Numbers terms in the order they are first seen. A lookup hashes the term's UTF-8 bytes
/// (FNV-1a, then SplitMix64's finaliser) into an open-addressed table: an index build makes one
/// lookup a token, and Swift's `[String: Int32]` (seeded SipHash through `Hasher`) was most of
/// Cranfield ×100's build.
package struct TermNumbers {
    package private(set) var terms: [String] = []
    private var hashes: [UInt64] = []
    private var bytes: [UInt8] = []
    private var starts: [Int] = [0]
    private var slots = [Int32](repeating: -1, count: 1024)

    package init() {}

    /// The term's number, new ones numbered from 0 up.
    package mutating func number(_ term: String) -> Int {
        var contiguous = term
        return contiguous.withUTF8 { number(of: $0, term) }
    }

    /// The 64-bit hash of a term's UTF-8 bytes, the same in every process.
    package static func hash(_ term: String) -> UInt64 {
        var term = term
        return term.withUTF8 { hash(utf8: $0) }
    }

    private static func hash(utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in utf8 { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        h = (h ^ (h >> 30)) &* 0xbf58_476d_1ce4_e5b9
        h = (h ^ (h >> 27)) &* 0x94d0_49bb_1331_11eb
        return h ^ (h >> 31)
    }

    private mutating func number(of utf8: UnsafeBufferPointer<UInt8>, _ term: String) -> Int {
        let h = Self.hash(utf8: utf8)
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: h) & mask
        while slots[slot] >= 0 {
            let id = Int(slots[slot])
            if hashes[id] == h && same(id, utf8) { return id }
            slot = (slot + 1) & mask
        }
        let id = terms.count
        terms.append(term)
        hashes.append(h)
        bytes.append(contentsOf: utf8)
        starts.append(bytes.count)
        slots[slot] = Int32(id)
        if terms.count * 2 > slots.count { grow() }
        return id
    }

    private func same(_ id: Int, _ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = starts[id]
        guard starts[id + 1] - start == utf8.count else { return false }
        return bytes.withUnsafeBufferPointer { stored in
            utf8.isEmpty || memcmp(stored.baseAddress! + start, utf8.baseAddress!, utf8.count) == 0
        }
    }

    private mutating func grow() {
        slots = [Int32](repeating: -1, count: slots.count * 2)
        let mask = slots.count - 1
        for (id, h) in hashes.enumerated() {
            var slot = Int(truncatingIfNeeded: h) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(id)
        }
    }
}
