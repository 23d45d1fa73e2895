import LoupeTUI
import LoupeTerminal
import Testing

@Suite struct ColorDepthTests {
    @Test func detectFollowsColorsAndNoColor() {
        #expect(ColorDepth.detect(colors: 256, environment: [:]) == .palette256)
        #expect(ColorDepth.detect(colors: 0x100_0000, environment: [:]) == .trueColor)
        #expect(ColorDepth.detect(colors: 8, environment: [:]) == .palette8)
        #expect(ColorDepth.detect(colors: 0, environment: [:]) == .none)
        #expect(ColorDepth.detect(colors: 256, environment: ["NO_COLOR": "1"]) == .none)
        // An empty NO_COLOR does not count (no-color.org).
        #expect(ColorDepth.detect(colors: 256, environment: ["NO_COLOR": ""]) == .palette256)
    }

    /// A heatmap ramp keeps its hues in 256 colours: no step of viridis becomes grey.
    @Test func aRampWithHuesHasNoGreyIn256Colours() {
        let ramp = Theme.builtInDefault
        for step in 0...40 {
            let colour = ramp.heatColor(Double(step) / 40)
            let number = ColorDepth.palette256.colorNumber(for: colour)!
            #expect(number < 232, "step \(step): \(colour) became grey \(number)")
        }
        #expect(ColorDepth.palette256.colorNumber(for: RGB(0x80, 0x80, 0x80)) == 244)
    }

    @Test func reducesToTheNearestPaletteEntry() {
        #expect(ColorDepth.palette256.colorNumber(for: RGB(0, 0, 0)) == 16)
        #expect(ColorDepth.palette256.colorNumber(for: RGB(255, 255, 255)) == 231)
        #expect(ColorDepth.palette256.colorNumber(for: RGB(0x87, 0xAF, 0xFF)) == 111)
        #expect(ColorDepth.palette256.colorNumber(for: RGB(0x80, 0x80, 0x80)) == 244)
        #expect(ColorDepth.palette16.colorNumber(for: RGB(250, 10, 10)) == 9)
        #expect(ColorDepth.palette8.colorNumber(for: RGB(250, 10, 10)) == 1)
        #expect(ColorDepth.palette8.colorNumber(for: RGB(0x7D, 0x85, 0x90)) == 7)  // grey text → white, not cyan
        #expect(ColorDepth.palette8.colorNumber(for: RGB(0x16, 0x1B, 0x22)) == 0)  // near-black → black
        #expect(ColorDepth.trueColor.colorNumber(for: RGB(0x12, 0x34, 0x56)) == 0x123456)
        #expect(ColorDepth.none.colorNumber(for: RGB(1, 2, 3)) == nil)
    }

    @Test func theDefaultThemeKeepsItsHuesIn256Colours() {
        // The selection must stay a blue, not drift to teal, when reduced.
        let selection = Theme.builtInDefault.color(.selectionBackground)!
        let index = Int(ColorDepth.palette256.colorNumber(for: selection)!) - 16
        let blue = index % 6
        let green = index / 6 % 6
        #expect(blue > green)
    }
}

/// OSC 52 carries the copied text as RFC 4648 base64 (the RFC's own test vectors).
@Suite struct ClipboardEncodingTests {
    @Test func base64MatchesRFC4648() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]
        for (plain, encoded) in vectors { #expect(NCursesBackend.base64(Array(plain.utf8)) == encoded, "\(plain)") }
        #expect(NCursesBackend.base64(Array("é ✓".utf8)) == "w6kg4pyT")
    }
}
