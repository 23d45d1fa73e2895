import CZstd
import Foundation

/// zstd frames for stored payloads: large JSON the workspace keeps but rarely reads (a span's raw
/// source) is written compressed, at a fast level.
package enum Zstd {
    package static func compress(_ text: String, level: Int32 = 1) -> Data {
        var text = text
        return text.withUTF8 { compress(UnsafeRawBufferPointer($0), level: level) }
    }

    package static func compress(_ data: Data, level: Int32 = 1) -> Data {
        data.withUnsafeBytes { compress($0, level: level) }
    }

    private static func compress(_ input: UnsafeRawBufferPointer, level: Int32) -> Data {
        let context = contexts.take()
        defer { contexts.give(context) }
        let bound = ZSTD_compressBound(input.count)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: bound, alignment: 16)
        defer { buffer.deallocate() }
        let written = ZSTD_compressCCtx(context, buffer, bound, input.baseAddress, input.count, level)
        precondition(ZSTD_isError(written) == 0, "zstd compression cannot fail with a full-size buffer")
        return Data(bytes: buffer, count: written)
    }

    /// Compression contexts kept for reuse: making one per span (what `ZSTD_compress` does)
    /// allocated and zeroed its tables every time, a tenth of an import.
    private static let contexts = ContextPool()

    /// Thread-safety: `idle` is touched only under `lock`; a context taken is used by one thread
    /// until it is given back.
    private final class ContextPool: @unchecked Sendable {
        private let lock = NSLock()
        private var idle: [OpaquePointer] = []

        func take() -> OpaquePointer {
            lock.lock()
            defer { lock.unlock() }
            guard let context = idle.popLast() else { return ZSTD_createCCtx() }
            return context
        }

        func give(_ context: OpaquePointer) {
            lock.lock()
            idle.append(context)
            lock.unlock()
        }
    }

    /// The most a stored frame may hold: its declared size is allocated before decoding, and a
    /// damaged frame could declare anything (Loupe writes no payload near this).
    package static let frameContentLimit = 512 << 20

    /// The frame's content, or nil when it is damaged, does not say its size, or says more than
    /// `frameContentLimit`.
    package static func decompress(_ frame: Data) -> Data? {
        frame.withUnsafeBytes { input -> Data? in
            let size = ZSTD_getFrameContentSize(input.baseAddress, input.count)
            guard size != ZSTD_CONTENTSIZE_ERROR, size != ZSTD_CONTENTSIZE_UNKNOWN, size <= UInt64(frameContentLimit)
            else {
                return nil
            }
            var out = Data(count: Int(size))
            let read = out.withUnsafeMutableBytes { output in
                ZSTD_decompress(output.baseAddress, output.count, input.baseAddress, input.count)
            }
            return ZSTD_isError(read) == 0 && read == Int(size) ? out : nil
        }
    }
}
