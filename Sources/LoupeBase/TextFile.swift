import Glibc

/// Reads a user's file whole, and says why not with a `FileReadError` (missing, a directory,
/// permission denied, too large, not UTF-8 at byte N) instead of one vague message for all.
package enum TextFile {
    /// The default size limit for files read whole: 1 GiB.
    package static let defaultLimitBytes = 1 << 30

    /// The bytes of `path`. Throws `FileReadError` when it cannot be opened or read, or when it is
    /// larger than `limitBytes` (checked before reading, so a huge file costs nothing).
    package static func bytes(_ path: String, limitBytes: Int = defaultLimitBytes) throws(FileReadError) -> [UInt8] {
        let (fd, size) = try openForReading(path)
        defer { close(fd) }
        if size > limitBytes { throw FileReadError(path: path, reason: .tooLarge(bytes: size, limitBytes: limitBytes)) }
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
            if out.count > limitBytes {
                throw FileReadError(path: path, reason: .tooLarge(bytes: out.count, limitBytes: limitBytes))
            }
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

    /// An open descriptor of `path` (the caller closes it) and its size; a directory is refused.
    static func openForReading(_ path: String) throws(FileReadError) -> (fd: Int32, size: Int) {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw FileReadError(path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw FileReadError(path: path, errno: code)
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw FileReadError(path: path, reason: .isDirectory)
        }
        return (fd, Int(info.st_size))
    }

    /// The text of `path`, which must be UTF-8; the error names the offset of the first invalid byte.
    package static func read(_ path: String, limitBytes: Int = defaultLimitBytes) throws(FileReadError) -> String {
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
