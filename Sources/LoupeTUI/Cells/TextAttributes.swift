/// Text attributes a cell can carry, independent of colour (they survive `NO_COLOR`).
package struct TextAttributes: OptionSet, Hashable, Sendable {
    package let rawValue: UInt8
    package init(rawValue: UInt8) { self.rawValue = rawValue }

    package static let bold = TextAttributes(rawValue: 1 << 0)
    package static let dim = TextAttributes(rawValue: 1 << 1)
    package static let italic = TextAttributes(rawValue: 1 << 2)
    package static let underline = TextAttributes(rawValue: 1 << 3)
    package static let reverse = TextAttributes(rawValue: 1 << 4)
}
