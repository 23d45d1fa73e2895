import LoupeTUI
import Testing

@Suite struct ThemeTests {
    @Test func builtInDefaultHasEveryRole() {
        for role in ThemeRole.allCases {
            #expect(Theme.builtInDefault.colors[role] != nil, "missing \(role.rawValue)")
        }
    }

    @Test func monochromeDropsColoursAndKeepsMeaningInAttributes() {
        let mono = Theme.builtInDefault.monochrome()
        #expect(mono.selection == Style(attributes: .reverse))
        #expect(mono.border(focused: true).attributes.contains(.bold))
        #expect(mono.text.foreground == nil)
        #expect(ThemeRole.allCases.allSatisfy { mono.color($0) == nil })
    }

    @Test func heatColorInterpolatesAlongTheRamp() {
        var theme = Theme.builtInDefault
        theme.heatmapRamp = [RGB(0, 0, 0), RGB(200, 100, 0)]
        #expect(theme.heatColor(0.5) == RGB(100, 50, 0))
        #expect(theme.heatColor(-1) == RGB(0, 0, 0))
        #expect(theme.heatColor(.nan) == RGB(0, 0, 0))
    }

    /// The mark floor is kept, not worked out per call: it must follow the ramp and the
    /// background whenever either changes.
    @Test func markFloorFollowsTheRampAndTheBackground() {
        var theme = Theme.builtInDefault
        theme.colors[.background] = ThemeColor(parsing: "#000000")
        theme.heatmapRamp = [RGB(0, 0, 0), RGB(255, 255, 255)]
        // Black to white on black: the first step with a contrast of 3 is well above the start.
        let onBlack = theme.markFloor
        #expect(onBlack > 0)
        #expect(theme.heatMarkColor(0).contrast(with: RGB(0, 0, 0)) >= 3)
        theme.heatmapRamp = [RGB(255, 255, 255), RGB(0, 0, 0)]
        #expect(theme.markFloor == 0, "white first on black reads from the ramp's start")
        theme.heatmapRamp = [RGB(0, 0, 0), RGB(255, 255, 255)]
        theme.colors[.background] = ThemeColor(parsing: "#ffffff")
        #expect(theme.markFloor == 0, "black first on white reads from the ramp's start")
        #expect(theme.monochrome().markFloor == onBlack, "monochrome draws on the terminal's black")
    }

    @Test func rgbParsesHex() {
        #expect(RGB(hex: "#58a6ff") == RGB(0x58, 0xA6, 0xFF))
        #expect(RGB(hex: "#58a6ff")?.hex == "#58a6ff")
        #expect(RGB(hex: "58a6") == nil)
        #expect(RGB(hex: "#zzzzzz") == nil)
        #expect(ThemeColor(parsing: "default") == .terminalDefault)
    }
}
