extension Theme {
    /// The dark default theme, compiled in so Loupe has colours even when `themes/` cannot be
    /// found or `themes/default.toml` is broken. `themes/default.toml` must say the same (a test
    /// checks it).
    package static let builtInDefault = Theme(
        name: "default",
        colors: [
            .background: .terminalDefault,
            .text: .rgb(RGB(0xC9, 0xD1, 0xD9)),
            .textDim: .rgb(RGB(0x7D, 0x85, 0x90)),
            .textAccent: .rgb(RGB(0x79, 0xC0, 0xFF)),
            .textTitle: .rgb(RGB(0xE6, 0xED, 0xF3)),
            .border: .rgb(RGB(0x3D, 0x44, 0x4D)),
            .borderFocused: .rgb(RGB(0x58, 0xA6, 0xFF)),
            .tabActiveForeground: .rgb(RGB(0x0D, 0x11, 0x17)),
            .tabActiveBackground: .rgb(RGB(0x58, 0xA6, 0xFF)),
            .tabInactive: .rgb(RGB(0x8B, 0x94, 0x9E)),
            .selectionForeground: .rgb(RGB(0xF0, 0xF6, 0xFC)),
            .selectionBackground: .rgb(RGB(0x26, 0x4F, 0x78)),
            .statusBackground: .rgb(RGB(0x16, 0x1B, 0x22)),
            .statusForeground: .rgb(RGB(0xC9, 0xD1, 0xD9)),
            .statusOK: .rgb(RGB(0x3F, 0xB9, 0x50)),
            .statusWarn: .rgb(RGB(0xD2, 0x99, 0x22)),
            .statusError: .rgb(RGB(0xF8, 0x51, 0x49)),
            .statusInfo: .rgb(RGB(0x58, 0xA6, 0xFF)),
            .key: .rgb(RGB(0xD2, 0xA8, 0xFF)),
            .inputForeground: .rgb(RGB(0xF0, 0xF6, 0xFC)),
            .inputBackground: .rgb(RGB(0x21, 0x26, 0x2D)),
            .match: .rgb(RGB(0xFF, 0xA6, 0x57)),
            .overlayBackground: .rgb(RGB(0x16, 0x1B, 0x22)),
            .rooflineCompute: .rgb(RGB(0xF7, 0x81, 0x66)),
            .rooflineMemory: .rgb(RGB(0x58, 0xA6, 0xFF)),
            .rooflinePoint: .rgb(RGB(0xE3, 0xB3, 0x41)),
            .chartAxis: .rgb(RGB(0x7D, 0x85, 0x90)),
            .profileGEMM: .rgb(RGB(0xF0, 0x88, 0x3E)),
            .profileConvolution: .rgb(RGB(0x3F, 0xB9, 0x50)),
            .profileAttention: .rgb(RGB(0x56, 0xD4, 0xDD)),
            .profileNormalization: .rgb(RGB(0xBC, 0x8C, 0xFF)),
            .profileReduction: .rgb(RGB(0xC6, 0x9A, 0x6D)),
            .profileElementwise: .rgb(RGB(0xE3, 0xD0, 0x4A)),
            .profileCommunication: .rgb(RGB(0xFF, 0x8F, 0xD0)),
            .profileMemory: .rgb(RGB(0x4F, 0x8F, 0xE6)),
            .profileSync: .rgb(RGB(0xFF, 0x6B, 0x6B)),
        ],
        heatmapRamp: [
            RGB(0x44, 0x01, 0x54), RGB(0x3B, 0x52, 0x8B), RGB(0x21, 0x90, 0x8C),
            RGB(0x5D, 0xC8, 0x63), RGB(0xFD, 0xE7, 0x25),
        ]
    )
}
