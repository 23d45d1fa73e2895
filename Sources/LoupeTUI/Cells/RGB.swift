import Foundation

/// A 24-bit colour. Frames hold colours as RGB; a backend reduces them to what the terminal
/// supports (truecolor, 256, 16 or none) when it writes them.
package struct RGB: Hashable, Sendable {
    package var red: UInt8
    package var green: UInt8
    package var blue: UInt8

    package init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// Parses `#rrggbb` (case-insensitive); nil for anything else.
    package init?(hex: String) {
        let digits = hex.hasPrefix("#") ? hex.dropFirst() : hex[...]
        guard digits.count == 6, let value = UInt32(digits, radix: 16) else { return nil }
        self.init(UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF))
    }

    /// `#rrggbb`, lower case.
    package var hex: String {
        let digits = [red, green, blue].map { byte -> String in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }
        return "#" + digits.joined()
    }

    /// Linear interpolation between two colours; `t` is clamped to 0...1.
    /// WCAG 2's relative luminance (sRGB channels linearised).
    package var relativeLuminance: Double {
        func linear(_ value: UInt8) -> Double {
            let x = Double(value) / 255
            return x <= 0.04045 ? x / 12.92 : pow((x + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue)
    }

    /// WCAG 2's contrast ratio with `other`, 1 (none) to 21 (black on white).
    package func contrast(with other: RGB) -> Double {
        let (a, b) = (relativeLuminance, other.relativeLuminance)
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }

    package static func mix(_ a: RGB, _ b: RGB, _ t: Double) -> RGB {
        let t = min(1, max(0, t))
        func channel(_ x: UInt8, _ y: UInt8) -> UInt8 {
            UInt8((Double(x) + (Double(y) - Double(x)) * t).rounded())
        }
        return RGB(channel(a.red, b.red), channel(a.green, b.green), channel(a.blue, b.blue))
    }
}
