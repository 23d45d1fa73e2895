import LoupeBase
import Testing

@Suite struct UntrustedTextTests {
    @Test func escapeSequencesBecomeVisible() {
        let hostile = "\u{1B}[2J\u{1B}]0;pwned\u{07}ok"
        let safe = UntrustedText.sanitized(hostile)
        #expect(safe == "␛[2J␛]0;pwned␇ok")
        #expect(!safe.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
    }

    @Test func c1ControlsAndBidiOverridesAreReplaced() {
        #expect(UntrustedText.sanitized("a\u{9B}b") == "a\u{FFFD}b")
        #expect(UntrustedText.sanitized("x\u{202E}y") == "x\u{FFFD}y")
        #expect(UntrustedText.sanitized("del\u{7F}") == "del␡")
    }

    @Test func plainTextIsUntouched() {
        #expect(UntrustedText.sanitized("héllo 中文 😀") == "héllo 中文 😀")
    }

    @Test func linesSplitExpandTabsAndDropCarriageReturns() {
        #expect(UntrustedText.lines("a\tb\r\nc\u{1B}") == ["a   b", "c␛"])
        #expect(UntrustedText.lines("ab\tc", tabWidth: 4) == ["ab  c"])
        #expect(UntrustedText.lines("") == [""])
    }
}
