import Foundation
import LoupeModels
import Testing

/// Broken GGUF files are refused with a `ModelError` naming the file, the field and its byte
/// offset, never a trap or an allocation sized by a count the file claims.
struct GGUFMalformedFileTests {
    /// Every prefix of a valid file (header, metadata, tensor infos, data) is refused, with the
    /// field that runs out and where.
    @Test func everyTruncationIsRefusedNamingTheField() throws {
        let whole = try Data(contentsOf: URL(fileURLWithPath: GGUFFixtures.path("all-types.gguf")))
        let lastTensorEnd =
            try GGUFFile(path: GGUFFixtures.path("all-types.gguf")).tensors
            .map { $0.offset + $0.byteCount }.max() ?? 0
        for length in 0..<lastTensorEnd {
            let message = GGUFBuilder.error(opening: Array(whole.prefix(length)))
            #expect(message.hasPrefix("bad.gguf: ") && message.contains(" at byte "), "\(length): \(message)")
        }
        let suffix = "; the count at byte 16 says 16, more than the"
        let expectations = [
            0: "bad.gguf: magic at byte 0: needs 4 bytes but the file is 0 bytes long (truncated?)",
            3: "bad.gguf: magic at byte 0: needs 4 bytes but the file is 3 bytes long (truncated?)",
            6: "bad.gguf: version at byte 4: needs 4 bytes but the file ends at byte 6 (truncated?)",
            15: "bad.gguf: tensor_count at byte 8: needs 8 bytes but the file ends at byte 15 (truncated?)",
            16: "bad.gguf: metadata_kv_count at byte 16: needs 8 bytes but the file ends at byte 16 (truncated?)",
            30: "bad.gguf: metadata key 0 at byte 24: needs 8 bytes but the file ends at byte 30 (truncated?)"
                + "\(suffix) 6 bytes after it can hold",
            40: "bad.gguf: metadata key 0 at byte 24: a string of 20 bytes runs past the end of the file "
                + "(8 bytes follow; truncated?)\(suffix) 16 bytes after it can hold",
            54: "bad.gguf: general.architecture value type at byte 52: needs 4 bytes but the file ends at byte 54 "
                + "(truncated?)\(suffix) 30 bytes after it can hold",
            60: "bad.gguf: general.architecture at byte 56: needs 8 bytes but the file ends at byte 60 (truncated?)"
                + "\(suffix) 36 bytes after it can hold",
        ]
        for (length, expected) in expectations.sorted(by: { $0.key < $1.key }) {
            #expect(GGUFBuilder.error(opening: Array(whole.prefix(length))) == expected)
        }
    }

    @Test func wrongMagicAndVersionsAreNamed() {
        var bytes = GGUFBuilder().bytes
        bytes[3] = UInt8(ascii: "L")
        #expect(
            GGUFBuilder.error(opening: bytes)
                == "bad.gguf: magic at byte 0: is 47 47 55 4c, not 'GGUF' (47 47 55 46): not a GGUF file")
        #expect(
            GGUFBuilder.error(opening: GGUFBuilder(version: 1).bytes)
                == "bad.gguf: version at byte 4: is 1; Loupe reads GGUF versions 2 and 3")
        #expect(
            GGUFBuilder.error(opening: GGUFBuilder(version: 3 << 24).bytes)
                == "bad.gguf: version at byte 4: is 50331648; Loupe reads GGUF versions 2 and 3 (a big-endian file?)")
        #expect(GGUFBuilder.error(opening: GGUFBuilder(version: 2).bytes) == "no error")
    }

    @Test func absurdCountsAreRefusedBeforeAnyAllocation() {
        let tooManyTensors =
            "bad.gguf: tensor 0 name at byte 24: needs 8 bytes but the file ends at byte 24 (truncated?); the count "
            + "at byte 8 says 1152921504606846976, more than the 8 bytes after it can hold"
        #expect(GGUFBuilder.error(opening: GGUFBuilder(tensorCount: 1 << 60).bytes) == tooManyTensors)
        let tooManyPairs =
            "bad.gguf: metadata key 0 at byte 24: needs 8 bytes but the file ends at byte 24 (truncated?); the count "
            + "at byte 16 says 18446744073709551615, more than the 0 bytes after it can hold"
        #expect(GGUFBuilder.error(opening: GGUFBuilder(pairCount: UInt64.max).bytes) == tooManyPairs)
        var hugeKey = GGUFBuilder()
        hugeKey.pair(rawKey: GGUFBuilder.u64(1 << 40) + Array("k".utf8), type: 4, value: GGUFBuilder.u32(1))
        #expect(
            GGUFBuilder.error(opening: hugeKey.bytes)
                == "bad.gguf: metadata key 0 at byte 24: a string of 1099511627776 bytes runs past the end of the "
                + "file (9 bytes follow; truncated?)")
        var hugeArray = GGUFBuilder()
        hugeArray.pair("tokens", type: 9, value: GGUFBuilder.u32(8) + GGUFBuilder.u64(1 << 60))
        let tooManyElements =
            "bad.gguf: tokens[0] at byte 54: needs 8 bytes but the file ends at byte 54 (truncated?); the count at "
            + "byte 46 says 1152921504606846976, more than the 0 bytes after it can hold"
        #expect(GGUFBuilder.error(opening: hugeArray.bytes) == tooManyElements)
        var hugeString = GGUFBuilder()
        hugeString.pair("name", type: 8, value: GGUFBuilder.u64(1 << 40) + Array("x".utf8))
        #expect(
            GGUFBuilder.error(opening: hugeString.bytes)
                == "bad.gguf: name at byte 40: a string of 1099511627776 bytes runs past the end of the file "
                + "(1 bytes follow; truncated?)")
    }

    @Test func badMetadataValuesAreNamed() {
        var unknownType = GGUFBuilder()
        unknownType.pair("x", type: 13, value: [0])
        #expect(
            GGUFBuilder.error(opening: unknownType.bytes)
                == "bad.gguf: x value type at byte 33: 13 is not a GGUF value type (0–12)")
        var unknownElement = GGUFBuilder()
        unknownElement.pair("x", type: 9, value: GGUFBuilder.u32(99) + GGUFBuilder.u64(0))
        #expect(
            GGUFBuilder.error(opening: unknownElement.bytes)
                == "bad.gguf: x at byte 37: array element type 99 is not a GGUF value type (0–12)")
        var escape = GGUFBuilder()
        escape.pair("a\u{1B}[31m", type: 13, value: [0])
        #expect(
            GGUFBuilder.error(opening: escape.bytes)
                == "bad.gguf: a\\u{1b}[31m value type at byte 38: 13 is not a GGUF value type (0–12)")
        var badBool = GGUFBuilder()
        badBool.pair("flag", type: 7, value: [2])
        #expect(GGUFBuilder.error(opening: badBool.bytes) == "bad.gguf: flag at byte 40: bool is 2, not 0 or 1")
        var duplicate = GGUFBuilder()
        duplicate.pair("a", type: 0, value: [1])
        duplicate.pair("a", type: 0, value: [2])
        #expect(GGUFBuilder.error(opening: duplicate.bytes) == "bad.gguf: metadata key 1 at byte 38: 'a' appears twice")
        var notUTF8 = GGUFBuilder()
        notUTF8.pair(rawKey: GGUFBuilder.u64(2) + [0xC3, 0x28], type: 0, value: [1])
        #expect(
            GGUFBuilder.error(opening: notUTF8.bytes)
                == "bad.gguf: metadata key 0 at byte 24: the 2-byte string is not valid UTF-8")
        // Nine arrays inside one another, one element each.
        var deep = GGUFBuilder()
        deep.pair(
            "deep", type: 9, value: Array(repeating: GGUFBuilder.u32(9) + GGUFBuilder.u64(1), count: 9).flatMap { $0 })
        #expect(
            GGUFBuilder.error(opening: deep.bytes)
                == "bad.gguf: deep[0][0][0][0][0][0][0][0] at byte 136: arrays nest deeper than 8 levels")
        for alignment: [UInt8] in [GGUFBuilder.u32(0), GGUFBuilder.u32(48)] {
            var badAlignment = GGUFBuilder()
            badAlignment.pair("general.alignment", type: 4, value: alignment)
            let value = alignment == GGUFBuilder.u32(0) ? 0 : 48
            #expect(
                GGUFBuilder.error(opening: badAlignment.bytes)
                    == "bad.gguf: general.alignment at byte 53: is uint32(\(value)) (uint32), not a power of two")
        }
    }

    @Test func badTensorInfosAreNamed() {
        func refusal(_ dimensions: [UInt64], type: UInt32 = 0, offset: UInt64 = 0, dataBytes: Int = 64) -> String {
            var builder = GGUFBuilder()
            builder.tensor("w", dimensions: dimensions, type: type, offset: offset)
            builder.data = Array(repeating: 0, count: dataBytes)
            return GGUFBuilder.error(opening: builder.bytes)
        }
        // Tensor infos start at byte 24: name length 8, "w" 1, n_dims at 33, dimensions at 37.
        #expect(refusal([4]) == "no error")
        #expect(refusal([]) == "bad.gguf: tensor 'w': n_dims at byte 33: is 0; ggml tensors have 1 to 4 dimensions")
        #expect(
            refusal([1, 1, 1, 1, 1])
                == "bad.gguf: tensor 'w': n_dims at byte 33: is 5; ggml tensors have 1 to 4 dimensions")
        #expect(
            refusal([4, 0]) == "bad.gguf: tensor 'w': dimension 1 at byte 45: is 0; dimensions are 1 to \(Int.max)")
        #expect(
            refusal([1 << 63])
                == "bad.gguf: tensor 'w': dimension 0 at byte 37: is 9223372036854775808; dimensions are 1 to \(Int.max)"
        )
        #expect(
            refusal([1 << 32, 1 << 32])
                == "bad.gguf: tensor 'w': dimension 1 at byte 45: [4294967296, 4294967296] has more elements than a "
                + "64-bit count holds")
        #expect(
            refusal([1 << 61], type: 0)
                == "bad.gguf: tensor 'w': dimensions at byte 33: F32 [2305843009213693952] needs more bytes than a "
                + "64-bit size holds")
        #expect(refusal([4], type: 99) == "bad.gguf: tensor 'w': type at byte 45: 99 is not a ggml tensor type")
        #expect(
            refusal([40], type: 3)
                == "bad.gguf: tensor 'w': dimension 0 at byte 37: is 40, not a multiple of Q4_1's block of 32")
        #expect(
            refusal([4], offset: 16)
                == "bad.gguf: tensor 'w': offset at byte 49: 16 is not a multiple of the alignment 32")
        #expect(
            refusal([32], offset: 32)
                == "bad.gguf: tensor 'w': offset at byte 49: data at 32 + 128 bytes (F32 [32]) runs past the end of "
                + "the 64 data bytes from byte 64 (truncated?)")
        #expect(
            refusal([4], offset: 1 << 62)
                == "bad.gguf: tensor 'w': offset at byte 49: data at 4611686018427387904 + 16 bytes (F32 [4]) runs "
                + "past the end of the 64 data bytes from byte 64 (truncated?)")
        #expect(
            refusal([1 << 40])
                == "bad.gguf: tensor 'w': offset at byte 49: data at 0 + 4398046511104 bytes (F32 [1099511627776]) "
                + "runs past the end of the 64 data bytes from byte 64 (truncated?)")
    }

    @Test func overlappingAndDuplicateTensorsAreRefused() {
        var overlap = GGUFBuilder()
        overlap.tensor("a", dimensions: [16], type: 0, offset: 0)
        overlap.tensor("b", dimensions: [4], type: 0, offset: 32)
        overlap.data = Array(repeating: 0, count: 128)
        // Infos: "a" at 24 (offset field at 49), "b" at 57 (offset field at 82).
        #expect(
            GGUFBuilder.error(opening: overlap.bytes)
                == "bad.gguf: tensor 'b': offset at byte 82: its bytes overlap those of 'a'")
        var duplicate = GGUFBuilder()
        duplicate.tensor("a", dimensions: [4], type: 0, offset: 0)
        duplicate.tensor("a", dimensions: [4], type: 0, offset: 32)
        duplicate.data = Array(repeating: 0, count: 64)
        #expect(
            GGUFBuilder.error(opening: duplicate.bytes)
                == "bad.gguf: tensor 'a': tensor 1 name at byte 57: appears twice")
    }

    @Test func aMissingFileOrDirectoryIsSaid() throws {
        let directory = NSTemporaryDirectory() + "loupe-gguf-\(UUID().uuidString)"
        let missing = #expect(throws: ModelError.self) { try GGUFFile(path: directory + "/model.gguf") }
        #expect(missing?.description.contains("model.gguf") == true)
        #expect(missing?.description.contains("no such file") == true)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let isDirectory = #expect(throws: ModelError.self) { try GGUFFile(path: directory) }
        #expect(isDirectory?.description.contains("is a directory") == true)
    }
}

/// Writes GGUF bytes field by field, so a test can put any value in any field.
struct GGUFBuilder {
    var version: UInt32 = 3
    var tensorCount: UInt64?
    var pairCount: UInt64?
    var alignment = 32
    private var pairs: [UInt8] = []
    private var pairsWritten: UInt64 = 0
    private var infos: [UInt8] = []
    private var infosWritten: UInt64 = 0
    /// The data section, written after padding the infos to `alignment`.
    var data: [UInt8] = []

    init(version: UInt32 = 3, tensorCount: UInt64? = nil, pairCount: UInt64? = nil) {
        self.version = version
        self.tensorCount = tensorCount
        self.pairCount = pairCount
    }

    static func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }
    static func string(_ text: String) -> [UInt8] { u64(UInt64(text.utf8.count)) + Array(text.utf8) }

    mutating func pair(_ key: String, type: UInt32, value: [UInt8]) {
        pair(rawKey: Self.string(key), type: type, value: value)
    }

    mutating func pair(rawKey: [UInt8], type: UInt32, value: [UInt8]) {
        pairs += rawKey + Self.u32(type) + value
        pairsWritten += 1
    }

    mutating func tensor(_ name: String, dimensions: [UInt64], type: UInt32, offset: UInt64) {
        infos += Self.string(name) + Self.u32(UInt32(dimensions.count)) + dimensions.flatMap(Self.u64)
        infos += Self.u32(type) + Self.u64(offset)
        infosWritten += 1
    }

    var bytes: [UInt8] {
        var bytes = Array("GGUF".utf8) + Self.u32(version)
        bytes += Self.u64(tensorCount ?? infosWritten) + Self.u64(pairCount ?? pairsWritten) + pairs + infos
        if !data.isEmpty {
            bytes += Array(repeating: 0, count: (alignment - bytes.count % alignment) % alignment) + data
        }
        return bytes
    }

    /// The description of the error opening `bytes` as `bad.gguf` gives, or "no error".
    static func error(opening bytes: [UInt8]) -> String {
        let directory = NSTemporaryDirectory() + "loupe-gguf-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/bad.gguf"))
        } catch { return "cannot write the test file: \(error)" }
        do {
            _ = try GGUFFile(path: directory + "/bad.gguf")
            return "no error"
        } catch { return error.description }
    }
}
