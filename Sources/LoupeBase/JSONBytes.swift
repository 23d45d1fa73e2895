/// JSON being written: bytes in storage grown by doubling, written through a pointer.
///
/// A trace import writes every span's payload and source as JSON, most of it the text of model
/// messages in which every quote is escaped. Appending to an `[UInt8]` checked uniqueness and
/// capacity for each run between two quotes; here a run of plain text is stored eight bytes at a
/// time and room is checked once per word.
struct JSONBytes: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int = 256) {
        self.capacity = max(16, capacity)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Makes room for `more` bytes past the end.
    @inline(__always)
    mutating func reserve(_ more: Int) {
        if count + more > capacity { grow(toHold: count + more) }
    }

    private mutating func grow(toHold needed: Int) {
        var grown = capacity * 2
        while grown < needed { grown *= 2 }
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        storage.initialize(from: base, count: count)
        base.deallocate()
        base = storage
        capacity = grown
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends without checking for room: the caller reserved it.
    @inline(__always)
    mutating func appendReserved(_ byte: UInt8) {
        base[count] = byte
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).initialize(from: start, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    mutating func append(_ text: String) {
        var text = text
        text.withUTF8 { append($0) }
    }

    /// Stores all eight bytes of `word` (in memory order) past the end and keeps the first
    /// `kept`: the rest are overwritten by what comes next. Eight bytes of room must be reserved.
    @inline(__always)
    mutating func store(_ word: UInt64, keeping kept: Int) {
        UnsafeMutableRawPointer(base + count).storeBytes(of: word, as: UInt64.self)
        count += kept
    }

    var string: String { String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self) }
}
