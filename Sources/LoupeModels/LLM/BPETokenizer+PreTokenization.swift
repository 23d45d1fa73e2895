/// GPT-2's pre-tokenizer regex, matched by hand over Unicode scalars:
///
///     's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
///
/// with Hugging Face `tokenizers`' semantics (ByteLevel with `use_regex`): alternatives are tried
/// in order at each position, the first that matches is taken, and the text between matches
/// cannot occur because every character matches some alternative. `\p{L}` is the letter
/// categories Lu Ll Lt Lm Lo, `\p{N}` Nd Nl No, `\s` the White_Space property; the optional
/// prefix is U+0020 only. `\s+(?!\S)` takes a run of whitespace followed by a non-space without
/// its last character, which then joins the next word (" world"). No NSRegularExpression: it is
/// slower and its classes are ICU's.
///
/// The `smollm` pre-tokenizer first cuts the text around every `\p{N}` character (Hugging Face's
/// `Digits(individual_digits)`, llama.cpp's `\p{N}` regex), and the regex runs on each piece on
/// its own: its lookahead does not see past a piece's end.
enum PreTokenization {
    /// A scalar's class for the regex.
    private enum Kind: UInt8 {
        case letter, number, space, other
    }

    /// ASCII classes, looked up without Unicode properties.
    private static let asciiKinds: [Kind] = (0..<128).map { value in
        let byte = UInt8(value)
        switch byte {
        case 0x09...0x0D, 0x20: return .space
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): return .letter
        default: return .other
        }
    }

    private static func kind(_ scalar: Unicode.Scalar) -> Kind {
        if scalar.value < 128 { return asciiKinds[Int(scalar.value)] }
        let properties = scalar.properties
        if properties.isWhitespace { return .space }
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: return .letter
        case .decimalNumber, .letterNumber, .otherNumber: return .number
        default: return .other
        }
    }

    /// Calls `piece` with the byte range of each piece of `utf8` (well-formed UTF-8), in order.
    static func split(_ utf8: UnsafeBufferPointer<UInt8>, digitsApart: Bool, piece: (Range<Int>) -> Void) {
        guard !utf8.isEmpty else { return }
        // Scalars, their classes and the byte offset each begins at (one more for the end).
        var values: [UInt32] = []
        var kinds: [Kind] = []
        var offsets: [Int] = []
        values.reserveCapacity(utf8.count)
        kinds.reserveCapacity(utf8.count)
        offsets.reserveCapacity(utf8.count + 1)
        var iterator = utf8.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            values.append(scalar.value)
            kinds.append(kind(scalar))
            offsets.append(offset)
            offset += UTF8.width(scalar)
        }
        offsets.append(offset)

        let count = values.count
        guard digitsApart else {
            matchRegex(values, kinds, from: 0, to: count) { piece(offsets[$0]..<offsets[$1]) }
            return
        }
        var start = 0
        for index in 0..<count where kinds[index] == .number {
            if start < index { matchRegex(values, kinds, from: start, to: index) { piece(offsets[$0]..<offsets[$1]) } }
            piece(offsets[index]..<offsets[index + 1])
            start = index + 1
        }
        if start < count { matchRegex(values, kinds, from: start, to: count) { piece(offsets[$0]..<offsets[$1]) } }
    }

    /// The regex's matches in scalars `start..<end`, as scalar index pairs.
    private static func matchRegex(
        _ values: [UInt32], _ kinds: [Kind], from start: Int, to end: Int, match: (Int, Int) -> Void
    ) {
        let apostrophe = UInt32(UInt8(ascii: "'"))
        let space = UInt32(UInt8(ascii: " "))
        var position = start
        while position < end {
            let matchEnd: Int
            if values[position] == apostrophe, let length = contraction(values, after: position, end: end) {
                matchEnd = position + 1 + length
            } else {
                // ` ?X+` for X in letter, number, other: the space is taken only when X follows it.
                var first = position
                if values[position] == space && position + 1 < end && kinds[position + 1] != .space { first += 1 }
                let kind = kinds[first]
                if kind != .space {
                    var last = first + 1
                    while last < end && kinds[last] == kind { last += 1 }
                    matchEnd = last
                } else {
                    var last = position + 1
                    while last < end && kinds[last] == .space { last += 1 }
                    // `\s+(?!\S)` gives back the last space when a non-space follows; a single
                    // space then falls to `\s+`, which takes it alone.
                    matchEnd = (last < end && last - position > 1) ? last - 1 : last
                }
            }
            match(position, matchEnd)
            position = matchEnd
        }
    }

    /// The length of the contraction (`s`, `t`, `re`, `ve`, `m`, `ll`, `d`) after an apostrophe.
    private static func contraction(_ values: [UInt32], after apostrophe: Int, end: Int) -> Int? {
        func at(_ offset: Int) -> UInt32? {
            apostrophe + offset < end ? values[apostrophe + offset] : nil
        }
        func ascii(_ character: Unicode.Scalar) -> UInt32 { character.value }
        guard let first = at(1) else { return nil }
        switch first {
        case ascii("s"), ascii("t"), ascii("m"), ascii("d"): return 1
        case ascii("r"), ascii("v"): return at(2) == ascii("e") ? 2 : nil
        case ascii("l"): return at(2) == ascii("l") ? 2 : nil
        default: return nil
        }
    }
}
