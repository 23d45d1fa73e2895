import CZlib
import Glibc

/// A file read in chunks, gzip or not (told apart by its first two bytes), for inputs too large
/// to hold whole: a profiler trace of gigabytes, usually gzipped. Memory holds one chunk and
/// zlib's buffers, whatever the file's size. A damaged or truncated gzip stream is an error, not a
/// short read; so are bytes after the last gzip member that are not another member (RFC 1952
/// allows members one after another, and they are read as one stream).
package final class ChunkedFile {
    package let path: String
    /// The file's size on disk (compressed, when it is gzip).
    package let size: Int
    /// Whether the file is gzip.
    package let isGzip: Bool
    /// Bytes handed out so far (inflated).
    package private(set) var offset = 0
    private let fd: Int32
    private let chunkBytes: Int
    private var atEnd = false
    /// Gzip only: zlib's state (at a fixed address, as zlib requires) and the compressed bytes
    /// read ahead of it.
    private let stream: UnsafeMutablePointer<z_stream>?
    private let input: UnsafeMutablePointer<UInt8>
    private let inputCapacity = 1 << 20
    /// Compressed bytes read from the file so far.
    private var rawOffset = 0
    /// Whether zlib is inside a member (a clean end of the file there is a truncated stream).
    private var inMember = true

    package init(path: String, chunkBytes: Int = 8 << 20) throws(FileReadError) {
        let (fd, size) = try TextFile.openForReading(path)
        var magic: (UInt8, UInt8) = (0, 0)
        isGzip = withUnsafeMutableBytes(of: &magic) { pread(fd, $0.baseAddress, 2, 0) } == 2 && magic == (0x1F, 0x8B)
        input = .allocate(capacity: inputCapacity)
        if isGzip {
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            // 16 + window bits: a gzip header and trailer, checked by zlib.
            guard inflateInit2_(stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
            else {
                stream.deallocate()
                input.deallocate()
                close(fd)
                throw FileReadError(path: path, reason: .system("zlib could not start"))
            }
            self.stream = stream
        } else {
            stream = nil
        }
        self.fd = fd
        self.path = path
        self.size = size
        self.chunkBytes = max(1, chunkBytes)
    }

    deinit {
        if let stream {
            inflateEnd(stream)
            stream.deallocate()
        }
        input.deallocate()
        close(fd)
    }

    /// How far through the file on disk reading is, 0…1.
    package var fraction: Double {
        guard size > 0 else { return 1 }
        let consumed = isGzip ? rawOffset - Int(stream!.pointee.avail_in) : offset
        return min(1, Double(consumed) / Double(size))
    }

    /// The next chunk (up to `chunkBytes`, inflated), nil at the end.
    package func next() throws(FileReadError) -> [UInt8]? {
        guard !atEnd else { return nil }
        var chunk = [UInt8](repeating: 0, count: chunkBytes)
        let filled = if let stream { try inflate(into: &chunk, stream) } else { try read(into: &chunk) }
        chunk.removeLast(chunkBytes - filled)
        offset += filled
        return filled == 0 ? nil : chunk
    }

    /// Fills `chunk` from a plain file; the bytes read.
    private func read(into chunk: inout [UInt8]) throws(FileReadError) -> Int {
        var filled = 0
        while filled < chunkBytes {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, chunkBytes - filled) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw FileReadError(path: path, errno: errno) }
            if n == 0 {
                atEnd = true
                break
            }
            filled += n
        }
        return filled
    }

    /// Fills `chunk` with inflated bytes; the bytes made.
    private func inflate(into chunk: inout [UInt8], _ stream: UnsafeMutablePointer<z_stream>) throws(FileReadError)
        -> Int
    {
        var filled = 0
        while filled < chunkBytes && !atEnd {
            if stream.pointee.avail_in == 0 {
                if try refill(stream) == 0 {
                    if inMember { throw damaged("it ends before its last block (the file was cut short)") }
                    atEnd = true
                    break
                }
            }
            let status = chunk.withUnsafeMutableBytes { out -> Int32 in
                stream.pointee.next_out = out.baseAddress!.assumingMemoryBound(to: Bytef.self) + filled
                stream.pointee.avail_out = uInt(chunkBytes - filled)
                return CZlib.inflate(stream, Z_NO_FLUSH)
            }
            filled = chunkBytes - Int(stream.pointee.avail_out)
            switch status {
            case Z_OK:
                inMember = true
            case Z_BUF_ERROR:
                // No room or no input: the chunk is full, or the next turn reads more.
                continue
            case Z_STREAM_END:
                inMember = false
                try startNextMember(stream)
            default:
                let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                throw damaged(message)
            }
        }
        return filled
    }

    /// After a member's end: the end of the file, another member (zlib starts on it), or bytes
    /// that are not gzip, which are refused rather than ignored (a file damaged, or appended to).
    private func startNextMember(_ stream: UnsafeMutablePointer<z_stream>) throws(FileReadError) {
        if stream.pointee.avail_in < 2 { _ = try refill(stream) }
        let left = Int(stream.pointee.avail_in)
        if left == 0 {
            atEnd = true
            return
        }
        let next = stream.pointee.next_in!
        if left >= 2 && next[0] == 0x1F && next[1] == 0x8B {
            guard inflateReset(stream) == Z_OK else { throw damaged("zlib could not start the next member") }
            inMember = true
            return
        }
        let at = rawOffset - left
        let trailing = size > at ? "\(size - at) bytes" : "bytes"
        throw FileReadError(
            path: path,
            reason: .system(
                "\(trailing) after the end of the gzip stream (at byte \(at)) are not another gzip member: "
                    + "the file is damaged or something was appended to it"))
    }

    /// Reads more compressed bytes after those zlib has not taken yet; the bytes read (0 at the
    /// end of the file).
    private func refill(_ stream: UnsafeMutablePointer<z_stream>) throws(FileReadError) -> Int {
        let left = Int(stream.pointee.avail_in)
        if left > 0, let next = stream.pointee.next_in, next != input {
            memmove(input, next, left)
        }
        var n: Int
        repeat { n = Glibc.read(fd, input + left, inputCapacity - left) } while n < 0 && errno == EINTR
        if n < 0 { throw FileReadError(path: path, errno: errno) }
        rawOffset += n
        stream.pointee.next_in = input
        stream.pointee.avail_in = uInt(left + n)
        return n
    }

    private func damaged(_ why: String) -> FileReadError {
        FileReadError(path: path, reason: .system("the gzip stream is damaged: \(why)"))
    }
}
