import CZlib
import Foundation

/// Gzip bodies (`Content-Encoding: gzip`, as OTLP exporters send them), inflated by zlib with a
/// ceiling on what comes out, so a small bomb cannot grow into gigabytes; and made, for what
/// Loupe sends on.
package enum Gzip {
    package enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The inflated body would pass `limit` bytes.
        case tooLarge(limit: Int)
        /// Not gzip, or damaged: zlib's own words.
        case damaged(String)

        package var description: String {
            switch self {
            case .tooLarge(let limit): "the gzip body inflates to more than \(limit) bytes"
            case .damaged(let why): "the gzip body is damaged: \(why)"
            }
        }
    }

    /// The inflated bytes of one or more gzip members, at most `limit` of them.
    package static func decompress(_ packed: Data, limit: Int) throws(Failure) -> Data {
        var stream = z_stream()
        // 16 + window bits: a gzip header and trailer, checked by zlib.
        guard inflateInit2_(&stream, 16 + MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .damaged("zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var out = Data()
        let chunk = 1 << 16
        var buffer = [UInt8](repeating: 0, count: chunk)
        var failure: Failure?
        packed.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            guard let base = input.bindMemory(to: Bytef.self).baseAddress else {
                failure = .damaged("the body is empty")
                return
            }
            stream.next_in = UnsafeMutablePointer(mutating: base)
            stream.avail_in = uInt(input.count)
            while true {
                let status = buffer.withUnsafeMutableBufferPointer { output -> Int32 in
                    stream.next_out = output.baseAddress
                    stream.avail_out = uInt(chunk)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk - Int(stream.avail_out)
                if out.count + produced > limit {
                    failure = .tooLarge(limit: limit)
                    return
                }
                out.append(contentsOf: buffer[..<produced])
                switch status {
                case Z_STREAM_END:
                    // Concatenated members are one body (RFC 1952 §2.2).
                    if stream.avail_in == 0 { return }
                    guard inflateReset(&stream) == Z_OK else {
                        failure = .damaged("a second member could not start")
                        return
                    }
                case Z_OK:
                    if stream.avail_in == 0 && produced == 0 {
                        failure = .damaged("it ends before its last block")
                        return
                    }
                case Z_BUF_ERROR where stream.avail_in == 0:
                    failure = .damaged("it ends before its last block")
                    return
                default:
                    let message = stream.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                    failure = .damaged(message)
                    return
                }
            }
        }
        if let failure { throw failure }
        return out
    }

    /// One gzip member holding `data`, at zlib's default level.
    package static func compress(_ data: Data) throws(Failure) -> Data {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw .damaged("zlib could not start") }
        defer { deflateEnd(&stream) }
        var out = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(data.count))))
        let status = data.withUnsafeBytes { (input: UnsafeRawBufferPointer) -> Int32 in
            stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
            stream.avail_in = uInt(input.count)
            return out.withUnsafeMutableBufferPointer { output in
                stream.next_out = output.baseAddress
                stream.avail_out = uInt(output.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw .damaged("zlib status \(status)") }
        return Data(out[..<Int(stream.total_out)])
    }
}
