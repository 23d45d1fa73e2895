import Foundation
import LoupeBase
import Testing

/// Caps on what a member may inflate to: a small archive must not make Loupe allocate gigabytes.
@Suite struct ZipArchiveTests {
    @Test func aDeclaredSizeOverTheCapFailsBeforeAnyAllocation() {
        // 1 GiB declared, a few bytes present: refused on the declaration alone.
        let archive = zip(name: "header.json", method: 8, packed: [0x03, 0x00], size: 1 << 30)
        let failure = #expect(throws: ZipArchive.Failure.self) {
            let zip = try ZipArchive(archive)
            _ = try zip.contents(of: zip.members[0])
        }
        #expect(failure?.member == "header.json")
        #expect(failure?.message.contains("more than the 512 MiB Loupe reads from one member") == true)
    }

    @Test func aZstdBombIsStoppedByTheRatioCap() throws {
        let text = String(repeating: " ", count: 4 << 20)
        let packed = [UInt8](Zstd.compress(text))
        let archive = zip(name: "header.json", method: 93, packed: packed, size: text.utf8.count)
        let zip = try ZipArchive(archive, limits: .init(memberBytes: 8 << 20, compressionRatio: 100))
        let failure = #expect(throws: ZipArchive.Failure.self) { try zip.contents(of: zip.members[0]) }
        #expect(failure?.message.contains("more than 100×") == true)
        // A 1 MiB member cap refuses it on its declared size alone.
        let lowered = try ZipArchive(archive, limits: .init(memberBytes: 1 << 20))
        #expect(throws: ZipArchive.Failure.self) { try lowered.contents(of: lowered.members[0]) }
    }

    @Test func inflatingStopsAtTheDeclaredSize() throws {
        let text = String(repeating: "{\"a\":1}", count: 1000)
        let packed = [UInt8](Zstd.compress(text))
        let archive = zip(name: "samples/1.json", method: 93, packed: packed, size: 100)
        let zip = try ZipArchive(archive)
        let failure = #expect(throws: ZipArchive.Failure.self) { try zip.contents(of: zip.members[0]) }
        #expect(failure?.message.contains("longer than the directory says") == true)
    }

    @Test func aMemberWithinTheCapsInflates() throws {
        let text = String(repeating: "{\"a\":1}", count: 1000)
        let archive = zip(name: "samples/1.json", method: 93, packed: [UInt8](Zstd.compress(text)), size: 7000)
        let zip = try ZipArchive(archive)
        #expect(try zip.contents(of: zip.members[0]) == Data(text.utf8))
    }

    @Test(arguments: [Data(), Data(repeating: 0xA5, count: 100)])
    func bytesThatAreNoZipSaySo(_ data: Data) {
        let failure = #expect(throws: ZipArchive.Failure.self) { try ZipArchive(data) }
        #expect(failure?.message.contains("zip archive") == true)
    }

    /// One member, `packed` as its data, `size` as its declared inflated size.
    private func zip(name: String, method: Int, packed: [UInt8], size: Int) -> Data {
        func u16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func u32(_ value: Int) -> [UInt8] { u16(value & 0xFFFF) + u16(value >> 16 & 0xFFFF) }
        let nameBytes = Array(name.utf8)
        let local =
            u32(0x0403_4B50) + u16(20) + u16(0) + u16(method) + u16(0) + u16(0) + u32(0) + u32(packed.count)
            + u32(size) + u16(nameBytes.count) + u16(0) + nameBytes + packed
        let central =
            u32(0x0201_4B50) + u16(20) + u16(20) + u16(0) + u16(method) + u16(0) + u16(0) + u32(0)
            + u32(packed.count) + u32(size) + u16(nameBytes.count) + u16(0) + u16(0) + u16(0) + u16(0) + u32(0)
            + u32(0) + nameBytes
        let end =
            u32(0x0605_4B50) + u16(0) + u16(0) + u16(1) + u16(1) + u32(central.count) + u32(local.count) + u16(0)
        return Data(local + central + end)
    }
}
