import Glibc

/// A file read a block of whole lines at a time, for inputs too large to hold whole (a JSON Lines
/// trace export of gigabytes): each block ends at a line's end, so its lines can be parsed on
/// their own, and knows the number of its first line.
package final class LineBlocks {
    package let path: String
    /// The file's size when it was opened (0 for a pipe).
    package let size: Int
    /// Bytes handed out so far.
    package private(set) var offset = 0
    private let fd: Int32
    private let blockBytes: Int
    private var carry: [UInt8] = []
    private var nextLine = 1
    private var atEnd = false

    /// - Parameter blockBytes: about how much each block holds; a line longer than that makes
    ///   its block as long as the line.
    package init(path: String, blockBytes: Int = 8 << 20) throws(FileReadError) {
        (fd, size) = try TextFile.openForReading(path)
        self.path = path
        self.blockBytes = max(1, blockBytes)
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
            var n: Int
            repeat {
                n = block.withUnsafeMutableBytes { read(fd, $0.baseAddress! + start, want) }
            } while n < 0 && errno == EINTR
            if n < 0 { throw FileReadError(path: path, errno: errno) }
            block.removeLast(want - n)
            hasNewline =
                hasNewline || n > 0 && block.withUnsafeBytes { memchr($0.baseAddress! + start, 0x0A, n) != nil }
            if n == 0 { atEnd = true }
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
