import LoupeTUI

/// How many colours the terminal can show; RGB colours are reduced to it when written.
package enum ColorDepth: Hashable, Sendable {
    /// 24-bit colour (terminfo with direct colour, e.g. `xterm-direct`).
    case trueColor
    /// The xterm 256-colour palette (`xterm-256color`, `tmux-256color`).
    case palette256
    /// The 16 ANSI colours.
    case palette16
    /// The 8 basic ANSI colours.
    case palette8
    /// No colour: attributes only (`NO_COLOR`, `TERM=vt100`).
    case none

    /// The depth for a terminal reporting `colors` (ncurses `COLORS`), honouring `NO_COLOR`
    /// (any non-empty value turns colour off, as https://no-color.org asks).
    package static func detect(colors: Int, environment: [String: String]) -> ColorDepth {
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .none }
        switch colors {
        case 0x100_0000...: return .trueColor
        case 256...: return .palette256
        case 16...: return .palette16
        case 8...: return .palette8
        default: return .none
        }
    }

    /// The terminal colour number for `rgb` at this depth (nil at `.none`).
    package func colorNumber(for rgb: RGB) -> Int32? {
        switch self {
        case .trueColor: return Int32(rgb.red) << 16 | Int32(rgb.green) << 8 | Int32(rgb.blue)
        case .palette256: return Int32(ColorDepth.nearest256(rgb))
        case .palette16: return Int32(ColorDepth.nearest(rgb, in: ColorDepth.ansi16))
        case .palette8:
            // Eight colours hold no grey: a near-neutral colour (dim text, borders) is white or
            // black by lightness rather than whichever hue happens to be nearest (often cyan).
            let channels = [Int(rgb.red), Int(rgb.green), Int(rgb.blue)]
            if channels.max()! - channels.min()! < 40 { return channels.reduce(0, +) / 3 >= 64 ? 7 : 0 }
            return Int32(ColorDepth.nearest(rgb, in: Array(ColorDepth.ansi16.prefix(8))))
        case .none: return nil
        }
    }

    /// The xterm palette entries 0–15 as their usual RGB values.
    static let ansi16: [RGB] = [
        RGB(0, 0, 0), RGB(205, 0, 0), RGB(0, 205, 0), RGB(205, 205, 0),
        RGB(0, 0, 238), RGB(205, 0, 205), RGB(0, 205, 205), RGB(229, 229, 229),
        RGB(127, 127, 127), RGB(255, 0, 0), RGB(0, 255, 0), RGB(255, 255, 0),
        RGB(92, 92, 255), RGB(255, 0, 255), RGB(0, 255, 255), RGB(255, 255, 255),
    ]

    private static let cubeLevels: [Int] = [0, 95, 135, 175, 215, 255]

    /// The nearest of the 6×6×6 colour cube (16–231) and the grey ramp (232–255).
    static func nearest256(_ rgb: RGB) -> Int {
        func cubeIndex(_ value: UInt8) -> Int {
            var best = 0
            for (index, level) in cubeLevels.enumerated()
            where abs(level - Int(value)) < abs(cubeLevels[best] - Int(value)) {
                best = index
            }
            return best
        }
        let r = cubeIndex(rgb.red)
        let g = cubeIndex(rgb.green)
        let b = cubeIndex(rgb.blue)
        let cube = RGB(UInt8(cubeLevels[r]), UInt8(cubeLevels[g]), UInt8(cubeLevels[b]))
        let average = (Int(rgb.red) + Int(rgb.green) + Int(rgb.blue)) / 3
        let greyIndex = min(23, max(0, (average - 8 + 5) / 10))
        let greyLevel = UInt8(8 + greyIndex * 10)
        let grey = RGB(greyLevel, greyLevel, greyLevel)
        // A colour with a clear hue keeps one: the grey ramp is often nearer by distance for dark
        // mid-tones (viridis's #3f2a70 would be grey 78), which put a grey band in the middle of
        // every heatmap ramp.
        let channels = [Int(rgb.red), Int(rgb.green), Int(rgb.blue)]
        let chromatic = channels.max()! - channels.min()! >= 40
        return !chromatic && distance(rgb, grey) < distance(rgb, cube) ? 232 + greyIndex : 16 + 36 * r + 6 * g + b
    }

    static func nearest(_ rgb: RGB, in palette: [RGB]) -> Int {
        var best = 0
        for index in palette.indices where distance(rgb, palette[index]) < distance(rgb, palette[best]) {
            best = index
        }
        return best
    }

    /// Squared distance with the usual "redmean" weights, closer to perception than plain RGB.
    private static func distance(_ a: RGB, _ b: RGB) -> Int {
        let meanRed = (Int(a.red) + Int(b.red)) / 2
        let dr = Int(a.red) - Int(b.red)
        let dg = Int(a.green) - Int(b.green)
        let db = Int(a.blue) - Int(b.blue)
        // Parenthesised: in Swift `>>` binds tighter than `*`.
        return (((512 + meanRed) * dr * dr) >> 8) + 4 * dg * dg + (((767 - meanRed) * db * db) >> 8)
    }
}
