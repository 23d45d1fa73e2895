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

    @Test func rgbParsesHex() {
        #expect(RGB(hex: "#58a6ff") == RGB(0x58, 0xA6, 0xFF))
        #expect(RGB(hex: "#58a6ff")?.hex == "#58a6ff")
        #expect(RGB(hex: "58a6") == nil)
        #expect(RGB(hex: "#zzzzzz") == nil)
        #expect(ThemeColor(parsing: "default") == .terminalDefault)
    }
}
