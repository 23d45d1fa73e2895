import CZlib
import CZstd
import Foundation

/// A zip archive read from memory: its central directory, and members inflated on demand —
/// stored, deflate (zlib) or zstd (method 93, possibly several frames), the methods Inspect AI
/// `.eval` logs use. Enough of PKZIP for logs; no ZIP64, encryption or spanning.
///
/// Members are inflated into a buffer of the size the directory declares, and that size is
/// checked against `Limits` before anything is allocated, so a small archive cannot make Loupe
/// allocate gigabytes (a zip bomb): inflating stops at the declared size.
package struct ZipArchive: Sendable {
    /// The most a member may inflate to. The defaults: 512 MiB per member (a large Inspect log's
    /// `samples/…json` is tens of MiB), and, for members over 1 MiB, at most 1,000 bytes out per
    /// byte in (deflate's own maximum is 1,032; JSON logs compress 5-20×).
    package struct Limits: Hashable, Sendable {
        package var memberBytes: Int
        package var compressionRatio: Int
        /// Members up to this size skip the ratio check: a short run of spaces is fine.
        package var ratioExemptBytes: Int

        package init(memberBytes: Int = 512 << 20, compressionRatio: Int = 1_000, ratioExemptBytes: Int = 1 << 20) {
            self.memberBytes = memberBytes
            self.compressionRatio = compressionRatio
            self.ratioExemptBytes = ratioExemptBytes
        }
    }

    package struct Member: Hashable, Sendable {
        package var name: String
        package var method: UInt16
        package var compressedSize: Int
        package var size: Int
        var localHeaderOffset: Int
    }

    package struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        package var member: String?
        package var message: String
        package var description: String { (member.map { "\($0): " } ?? "") + message }
    }

    private let data: Data
    package let members: [Member]
    package let limits: Limits

    package init(_ data: Data, limits: Limits = Limits()) throws(Failure) {
        self.data = data
        self.limits = limits
        let bytes = [UInt8](data)
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        func u32(_ at: Int) -> Int { u16(at) | u16(at + 2) << 16 }
        // The end-of-central-directory record: the last "PK\5\6" within 64 KiB of comment.
        guard bytes.count >= 22 else { throw Failure(message: "too short to be a zip archive") }
        var end = bytes.count - 22
        let floor = max(0, bytes.count - 22 - 65_535)
        while end >= floor,
            !(bytes[end] == 0x50 && bytes[end + 1] == 0x4B && bytes[end + 2] == 5 && bytes[end + 3] == 6)
        {
            end -= 1
        }
        guard end >= floor else { throw Failure(message: "not a zip archive (no end of central directory)") }
        let count = u16(end + 10)
        var at = u32(end + 16)
        var members: [Member] = []
        for _ in 0..<count {
            guard at + 46 <= bytes.count, u32(at) == 0x0201_4B50 else {
                throw Failure(message: "central directory entry at byte \(at) is damaged")
            }
            let nameLength = u16(at + 28)
            let extra = u16(at + 30)
            let comment = u16(at + 32)
            guard at + 46 + nameLength <= bytes.count else { throw Failure(message: "central directory is truncated") }
            let name = String(decoding: bytes[(at + 46)..<(at + 46 + nameLength)], as: UTF8.self)
            members.append(
                Member(
                    name: name, method: UInt16(u16(at + 10)), compressedSize: u32(at + 20), size: u32(at + 24),
                    localHeaderOffset: u32(at + 42)))
            at += 46 + nameLength + extra + comment
        }
        self.members = members
    }

    package func member(named name: String) -> Member? { members.first { $0.name == name } }

    /// A member's bytes, decompressed.
    package func contents(of member: Member) throws(Failure) -> Data {
        let at = member.localHeaderOffset
        func fail(_ message: String) -> Failure { Failure(member: member.name, message: message) }
        guard at + 30 <= data.count else { throw fail("local header past the end of the archive") }
        let header = data.subdata(in: (data.startIndex + at)..<(data.startIndex + at + 30))
        let h = [UInt8](header)
        guard h[0] == 0x50, h[1] == 0x4B, h[2] == 3, h[3] == 4 else { throw fail("local header is damaged") }
        let start = at + 30 + (Int(h[26]) | Int(h[27]) << 8) + (Int(h[28]) | Int(h[29]) << 8)
        guard start + member.compressedSize <= data.count else { throw fail("data past the end of the archive") }
        if member.method != 0 {
            guard member.size <= limits.memberBytes else {
                throw fail(
                    "inflates to \(member.size) bytes, more than the \(limits.memberBytes >> 20) MiB Loupe reads from one member (a zip bomb, or a log to split)"
                )
            }
            guard
                member.size <= limits.ratioExemptBytes
                    || member.size / max(1, member.compressedSize) <= limits.compressionRatio
            else {
                throw fail(
                    "inflates \(member.compressedSize) bytes to \(member.size), more than \(limits.compressionRatio)× (a zip bomb?)"
                )
            }
        }
        let packed = data.subdata(in: (data.startIndex + start)..<(data.startIndex + start + member.compressedSize))
        let out: Data
        switch member.method {
        case 0: out = packed
        case 8: out = try Self.inflate(packed, size: member.size, fail: fail)
        case 93: out = try Self.unzstd(packed, size: member.size, fail: fail)
        default: throw fail("compression method \(member.method) is not supported (stored, deflate, zstd are)")
        }
        guard out.count == member.size else {
            throw fail("decompressed to \(out.count) bytes, the directory says \(member.size)")
        }
        return out
    }

    private static func inflate(_ packed: Data, size: Int, fail: (String) -> Failure) throws(Failure) -> Data {
        var out = Data(count: size)
        var stream = z_stream()
        var status: Int32 = Z_OK
        packed.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            out.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) in
                // Raw deflate: negative window bits, no zlib header.
                guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
                else {
                    status = Z_STREAM_ERROR
                    return
                }
                stream.next_in = UnsafeMutablePointer(
                    mutating: input.bindMemory(to: Bytef.self).baseAddress ?? UnsafePointer(bitPattern: 1)!)
                stream.avail_in = uInt(input.count)
                stream.next_out = output.bindMemory(to: Bytef.self).baseAddress ?? UnsafeMutablePointer(bitPattern: 1)!
                stream.avail_out = uInt(output.count)
                status = CZlib.inflate(&stream, Z_FINISH)
                inflateEnd(&stream)
            }
        }
        // Z_FINISH into a buffer of the declared size stops there: more data is Z_BUF_ERROR.
        if status == Z_BUF_ERROR && stream.avail_out == 0 {
            throw fail("deflate data inflates to more than the directory's \(size) bytes")
        }
        guard status == Z_STREAM_END else { throw fail("deflate data is damaged (zlib status \(status))") }
        return out.prefix(Int(stream.total_out))
    }

    private static func unzstd(_ packed: Data, size: Int, fail: (String) -> Failure) throws(Failure) -> Data {
        var out = Data(count: size)
        var failure: String?
        var produced = 0
        packed.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
            out.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) in
                guard let context = ZSTD_createDCtx() else {
                    failure = "zstd context could not be created"
                    return
                }
                defer { ZSTD_freeDCtx(context) }
                // A stream decoder reads every frame in turn.
                var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
                var target = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
                while source.pos < source.size {
                    let result = ZSTD_decompressStream(context, &target, &source)
                    if ZSTD_isError(result) != 0 {
                        failure = "zstd data is damaged (\(String(cString: ZSTD_getErrorName(result))))"
                        return
                    }
                    if result != 0 && target.pos == target.size && source.pos < source.size {
                        failure = "zstd data is longer than the directory says"
                        return
                    }
                    if result != 0 && source.pos == source.size { break }
                }
                produced = target.pos
            }
        }
        if let failure { throw fail(failure) }
        return out.prefix(produced)
    }
}
