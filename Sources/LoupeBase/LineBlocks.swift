import Glibc

/// A file read a block of whole lines at a time, for inputs too large to hold whole (a JSON Lines
/// trace export of gigabytes): each block ends at a line's end, so its lines can be parsed on
/// their own, and knows the number of its first line. It reads at most the input limit
/// (`InputFile.limitBytes`, or `limitBytes`): a file larger than that is refused from its size,
/// standard input once that much has come.
package final class LineBlocks {
    package let path: String
    /// The file's size when it was opened (0 for a pipe).
    package let size: Int
    /// Bytes handed out so far.
    package private(set) var offset = 0
    private let fd: Int32
    private let blockBytes: Int
    private let limitBytes: Int
    private var carry: [UInt8] = []
    private var nextLine = 1
    private var atEnd = false

    /// - Parameter blockBytes: about how much each block holds; a line longer than that makes
    ///   its block as long as the line.
    /// - Parameter limitBytes: the most this reads of the input; nil for the input limit.
    package init(path: String, blockBytes: Int = 8 << 20, limitBytes: Int? = nil) throws(FileReadError) {
        (fd, size) = try TextFile.openForReading(path)
        self.path = path
        self.blockBytes = max(1, blockBytes)
        self.limitBytes = limitBytes ?? InputFile.limitBytes
        if size > self.limitBytes {
            close(fd)
            throw FileReadError(
                path: path, reason: .overInputLimit(bytes: size, limitBytes: self.limitBytes, streamed: false))
        }
    }

    /// The first `count` bytes not yet handed out (fewer at the end of the input), read now and
    /// handed out again by the next block: for telling a file's format from its start without
    /// reading the rest (which standard input could not read twice).
    package func peek(_ count: Int) throws(FileReadError) -> [UInt8] {
        while carry.count < count && !atEnd {
            let start = carry.count
            let want = min(count - carry.count, 1 << 20)
            carry.append(contentsOf: repeatElement(0, count: want))
            let n = try read(into: &carry, at: start, count: want)
            carry.removeLast(want - n)
        }
        return Array(carry.prefix(count))
    }

    /// Skips a UTF-8 byte order mark (EF BB BF) at the start of the input, which some Windows
    /// tools write before JSON; whether there was one.
    package func skipByteOrderMark() throws(FileReadError) -> Bool {
        guard offset == 0, try peek(3) == [0xEF, 0xBB, 0xBF] else { return false }
        carry.removeFirst(3)
        offset = 3
        return true
    }

    /// Everything not yet handed out, whole, in one array (up to the limit): for a format read
    /// whole once `peek` has told what it is.
    package func remaining() throws(FileReadError) -> [UInt8] {
        var all = carry
        carry = []
        if size > offset + all.count { all.reserveCapacity(size - offset) }
        while !atEnd {
            let start = all.count
            let want = size > offset + start ? min(size - offset - start + 1, 1 << 24) : 1 << 20
            all.append(contentsOf: repeatElement(0, count: want))
            let n = try read(into: &all, at: start, count: want)
            all.removeLast(want - n)
        }
        offset += all.count
        return all
    }

    /// Reads up to `count` bytes into `buffer` at `start` (room already made), retrying on EINTR;
    /// marks the end, and throws once more than the limit has been read.
    private func read(into buffer: inout [UInt8], at start: Int, count: Int) throws(FileReadError) -> Int {
        var n: Int
        repeat {
            n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + start, count) }
        } while n < 0 && errno == EINTR
        if n < 0 { throw FileReadError(path: path, errno: errno) }
        if n == 0 { atEnd = true }
        // `buffer` holds all that was read and not yet handed out (`offset`) up to here.
        if offset + start + n > limitBytes {
            throw FileReadError(
                path: path, reason: .overInputLimit(bytes: limitBytes, limitBytes: limitBytes, streamed: true))
        }
        return n
    }

    deinit { close(fd) }

    /// The next block of whole lines (the last one may lack its newline) and the number of its
    /// first line; nil at the end of the file.
    package func next() throws(FileReadError) -> (bytes: [UInt8], firstLine: Int)? {
        var block = carry
        carry = []
        var hasNewline = block.withUnsafeBytes { raw in
            raw.count > 0 && memchr(raw.baseAddress!, 0x0A, raw.count) != nil
        }
        while !atEnd && (block.count < blockBytes || !hasNewline) {
            var want = max(blockBytes - block.count, min(blockBytes, 1 << 20))
            // Room for what is left of a file smaller than that (and some, to see its end), not a
            // whole block of zeros: every import starts by reading a block.
            if size > 0 { want = min(want, max(0, size - offset - block.count) + (1 << 16)) }
            // A line longer than a block: it ends by the end of the file at the latest, so room
            // for the rest of the file is made once instead of doubling (and copying) as it grows.
            if block.count >= blockBytes, size > offset + block.count, block.capacity < size - offset {
                block.reserveCapacity(size - offset)
            }
            let start = block.count
            block.append(contentsOf: repeatElement(0, count: want))
            let n = try read(into: &block, at: start, count: want)
            block.removeLast(want - n)
            hasNewline =
                hasNewline || n > 0 && block.withUnsafeBytes { memchr($0.baseAddress! + start, 0x0A, n) != nil }
        }
        if block.isEmpty { return nil }
        if !atEnd, let cut = block.lastIndex(of: 0x0A) {
            carry = Array(block[(cut + 1)...])
            block.removeSubrange((cut + 1)...)
        }
        let first = nextLine
        nextLine += Self.newlines(in: block)
        offset += block.count
        return (block, first)
    }

    /// How many newline bytes `bytes` holds, eight at a time (a block is megabytes; a byte at a
    /// time was most of the time the reader kept a core from parsing).
    package static func newlines(in bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { raw in
            var count = 0
            var offset = 0
            while offset + 8 <= raw.count {
                let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                count += ByteLanes.exactlyEqual(to: 0x0A, in: word).nonzeroBitCount
                offset += 8
            }
            while offset < raw.count {
                if raw[offset] == 0x0A { count += 1 }
                offset += 1
            }
            return count
        }
    }
}
