import CZlib
import Glibc

/// A file read in chunks, gzip or not (zlib tells them apart by their first bytes), for inputs
/// too large to hold whole: a profiler trace of gigabytes, usually gzipped. A damaged or
/// truncated gzip stream is an error, not a short read.
package final class ChunkedFile {
    package let path: String
    /// The file's size on disk (compressed, when it is gzip).
    package let size: Int
    /// Whether the file is gzip.
    package let isGzip: Bool
    /// Bytes handed out so far (inflated).
    package private(set) var offset = 0
    private let file: gzFile
    private let chunkBytes: Int
    private var atEnd = false

    package init(path: String, chunkBytes: Int = 8 << 20) throws(FileReadError) {
        let (fd, size) = try TextFile.openForReading(path)
        var magic: (UInt8, UInt8) = (0, 0)
        isGzip = withUnsafeMutableBytes(of: &magic) { pread(fd, $0.baseAddress, 2, 0) } == 2 && magic == (0x1F, 0x8B)
        guard let file = gzdopen(fd, "rb") else {
            close(fd)
            throw FileReadError(path: path, reason: .system("zlib could not open it"))
        }
        gzbuffer(file, 1 << 20)
        self.file = file
        self.path = path
        self.size = size
        self.chunkBytes = max(1, chunkBytes)
    }

    deinit { gzclose_r(file) }

    /// How far through the file on disk reading is, 0…1.
    package var fraction: Double {
        guard size > 0 else { return 1 }
        return min(1, Double(isGzip ? Int(gzoffset(file)) : offset) / Double(size))
    }

    /// The next chunk (up to `chunkBytes`, inflated), nil at the end.
    package func next() throws(FileReadError) -> [UInt8]? {
        guard !atEnd else { return nil }
        var chunk = [UInt8](repeating: 0, count: chunkBytes)
        var filled = 0
        while filled < chunkBytes {
            let n = chunk.withUnsafeMutableBytes {
                gzread(file, $0.baseAddress! + filled, UInt32(min(chunkBytes - filled, Int(Int32.max))))
            }
            if n < 0 {
                var code: Int32 = 0
                let message = gzerror(file, &code).map { String(cString: $0) } ?? "zlib error \(code)"
                throw FileReadError(path: path, reason: .system("the gzip stream is damaged: \(message)"))
            }
            if n == 0 {
                // gzread reports a stream cut short as a clean end; zlib's own error says so.
                var code: Int32 = 0
                let message = gzerror(file, &code).map { String(cString: $0) } ?? ""
                if code != Z_OK && code != Z_STREAM_END {
                    throw FileReadError(path: path, reason: .system("the gzip stream is damaged: \(message)"))
                }
                atEnd = true
                break
            }
            filled += Int(n)
        }
        chunk.removeLast(chunkBytes - filled)
        offset += filled
        return filled == 0 ? nil : chunk
    }
}
