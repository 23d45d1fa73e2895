import Glibc

/// Reads a user's file whole, and says why not with a `FileReadError` (missing, a directory,
/// permission denied, too large, not UTF-8 at byte N) instead of one vague message for all.
package enum TextFile {
    /// The bytes of `path` (a regular file, or standard input as `-`: see `InputFile`). Throws
    /// `FileReadError` when it cannot be opened or read, or when it is larger than `limitBytes`
    /// (checked from a file's size before reading, so a huge file costs nothing; standard input is
    /// read up to the limit). Without `limitBytes`, the input limit (`InputFile.limitBytes`).
    package static func bytes(_ path: String, limitBytes: Int? = nil) throws(FileReadError) -> [UInt8] {
        let (fd, size) = try openForReading(path)
        defer { close(fd) }
        let limit = limitBytes ?? InputFile.limitBytes
        func tooLarge(_ bytes: Int, streamed: Bool) -> FileReadError {
            FileReadError(
                path: path,
                reason: limitBytes == nil
                    ? .overInputLimit(bytes: bytes, limitBytes: limit, streamed: streamed)
                    : .tooLarge(bytes: bytes, limitBytes: limit))
        }
        if size > limit { throw tooLarge(size, streamed: false) }
        // Pipes and /proc files report size 0: read until end of file either way.
        var out: [UInt8] = []
        out.reserveCapacity(size)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileReadError(path: path, errno: errno)
            }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
            if out.count > limit { throw tooLarge(limit, streamed: true) }
        }
        return out
    }

    /// The size of `path` in bytes, after checking that it is a file this process can open for
    /// reading: for files that are mapped rather than read (model weights), so that a missing file,
    /// a directory or a permission problem is said as such.
    package static func readableSize(_ path: String) throws(FileReadError) -> Int {
        let (fd, size) = try openForReading(path)
        close(fd)
        return size
    }

    /// An open descriptor of `path` (the caller closes it) and its size: `InputFile.open`.
    static func openForReading(_ path: String) throws(FileReadError) -> (fd: Int32, size: Int) {
        try InputFile.open(path)
    }

    /// The text of `path`, which must be UTF-8; the error names the offset of the first invalid byte.
    package static func read(_ path: String, limitBytes: Int? = nil) throws(FileReadError) -> String {
        let data = try bytes(path, limitBytes: limitBytes)
        if let offset = firstInvalidUTF8Offset(data) {
            throw FileReadError(path: path, reason: .notUTF8(byteOffset: offset))
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The byte offset of the first byte that does not start or continue a valid UTF-8 sequence.
    package static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int? {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): offset += UTF8.width(scalar)
            case .emptyInput: return nil
            case .error: return offset
            }
        }
    }
}

private let systemRead = Glibc.read
