import CNCurses
import Glibc
import LoupeBase
import LoupeTUI
import Testing

/// Our width table against the C library's `wcwidth` for code points both agree are settled
/// (the table is generated from Unicode 14; glibc may be newer for recent emoji).
@Suite struct TextWidthLibcTests {
    static let samples: [UInt32] = [
        0x41, 0x7E, 0xE9, 0x416, 0x5D0, 0x627, 0x905, 0xE01, 0x1100, 0x2E80, 0x3042, 0x30A2, 0x4E00, 0x9FA5,
        0xAC00, 0xD7A3, 0xF900, 0xFF01, 0xFF61, 0x20000, 0x1F600, 0x1F680, 0x300, 0x301, 0x20D0, 0x200B,
    ]

    @Test func agreesWithGlibcInAUTF8Locale() throws {
        guard setlocale(LC_CTYPE, "C.UTF-8") != nil else { return }
        for value in Self.samples {
            let scalar = try #require(Unicode.Scalar(value))
            let ours = TextWidth.of(Character(scalar))
            let libc = Int(loupe_wcwidth(wchar_t(bitPattern: value)))
            #expect(
                ours == max(0, libc), "U+\(String(value, radix: 16, uppercase: true)): ours \(ours), wcwidth \(libc)")
        }
    }
}
