/// M. F. Porter's suffix-stripping algorithm (1980, "An algorithm for suffix stripping",
/// Program 14(3)), steps 1a–5b, on lower-case ASCII words. Words of one or two letters are left
/// alone, as in Porter's reference implementation.
package enum PorterStemmer {
    package static func stem(_ word: String) -> String {
        var w = Array(word.utf8)
        guard w.count > 2, w.allSatisfy({ $0 >= 97 && $0 <= 122 }) else { return word }
        step1a(&w)
        step1b(&w)
        step1c(&w)
        step2(&w)
        step3(&w)
        step4(&w)
        step5(&w)
        return String(decoding: w, as: UTF8.self)
    }

    // MARK: - Measure and conditions

    /// Whether `w[i]` is a consonant (y is one at the start or after a vowel).
    private static func isConsonant(_ w: [UInt8], _ i: Int) -> Bool {
        switch w[i] {
        case 97, 101, 105, 111, 117: return false  // a e i o u
        case 121: return i == 0 ? true : !isConsonant(w, i - 1)  // y
        default: return true
        }
    }

    /// m in [C](VC)^m[V] of the first `length` letters.
    private static func measure(_ w: [UInt8], _ length: Int) -> Int {
        var m = 0
        var i = 0
        while i < length && isConsonant(w, i) { i += 1 }
        while i < length {
            while i < length && !isConsonant(w, i) { i += 1 }
            guard i < length else { break }
            m += 1
            while i < length && isConsonant(w, i) { i += 1 }
        }
        return m
    }

    private static func hasVowel(_ w: [UInt8], _ length: Int) -> Bool {
        (0..<length).contains { !isConsonant(w, $0) }
    }

    private static func endsDoubleConsonant(_ w: [UInt8], _ length: Int) -> Bool {
        length >= 2 && w[length - 1] == w[length - 2] && isConsonant(w, length - 1)
    }

    /// *o: the stem ends consonant-vowel-consonant, the last not w, x or y.
    private static func endsCVC(_ w: [UInt8], _ length: Int) -> Bool {
        guard length >= 3, isConsonant(w, length - 1), !isConsonant(w, length - 2), isConsonant(w, length - 3)
        else { return false }
        let last = w[length - 1]
        return last != 119 && last != 120 && last != 121
    }

    private static func ends(_ w: [UInt8], _ suffix: String) -> Bool {
        let s = Array(suffix.utf8)
        return w.count >= s.count && Array(w[(w.count - s.count)...]) == s
    }

    /// Replaces `suffix` by `replacement` when the stem before it has measure > `minimum`.
    @discardableResult
    private static func replace(_ w: inout [UInt8], _ suffix: String, _ replacement: String, minimum: Int) -> Bool {
        guard ends(w, suffix) else { return false }
        let stem = w.count - suffix.utf8.count
        if measure(w, stem) > minimum {
            w.removeLast(suffix.utf8.count)
            w.append(contentsOf: replacement.utf8)
        }
        return true
    }

    // MARK: - Steps

    private static func step1a(_ w: inout [UInt8]) {
        if ends(w, "sses") {
            w.removeLast(2)
        } else if ends(w, "ies") {
            w.removeLast(2)
        } else if ends(w, "ss") {
        } else if ends(w, "s") {
            w.removeLast()
        }
    }

    private static func step1b(_ w: inout [UInt8]) {
        if ends(w, "eed") {
            if measure(w, w.count - 3) > 0 { w.removeLast() }
            return
        }
        var removed = false
        if ends(w, "ed"), hasVowel(w, w.count - 2) {
            w.removeLast(2)
            removed = true
        } else if ends(w, "ing"), hasVowel(w, w.count - 3) {
            w.removeLast(3)
            removed = true
        }
        guard removed else { return }
        if ends(w, "at") || ends(w, "bl") || ends(w, "iz") {
            w.append(101)
        } else if endsDoubleConsonant(w, w.count), ![108, 115, 122].contains(w.last!) {  // not l, s, z
            w.removeLast()
        } else if measure(w, w.count) == 1 && endsCVC(w, w.count) {
            w.append(101)
        }
    }

    private static func step1c(_ w: inout [UInt8]) {
        if w.last == 121, hasVowel(w, w.count - 1) { w[w.count - 1] = 105 }
    }

    private static let step2Rules: [(String, String)] = [
        ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"),
        ("abli", "able"), ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"),
        ("ation", "ate"), ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"),
        ("ousness", "ous"), ("aliti", "al"), ("iviti", "ive"), ("biliti", "ble"),
    ]

    private static func step2(_ w: inout [UInt8]) {
        for (suffix, replacement) in step2Rules where replace(&w, suffix, replacement, minimum: 0) { return }
    }

    private static let step3Rules: [(String, String)] = [
        ("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""),
    ]

    private static func step3(_ w: inout [UInt8]) {
        for (suffix, replacement) in step3Rules where replace(&w, suffix, replacement, minimum: 0) { return }
    }

    private static let step4Suffixes = [
        "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate",
        "iti", "ous", "ive", "ize",
    ]

    private static func step4(_ w: inout [UInt8]) {
        // The longest matching suffix decides (ement before ment before ent).
        guard let suffix = step4Suffixes.filter({ ends(w, $0) }).max(by: { $0.utf8.count < $1.utf8.count }) else {
            return
        }
        let stem = w.count - suffix.utf8.count
        guard measure(w, stem) > 1 else { return }
        if suffix == "ion" {
            guard stem > 0, w[stem - 1] == 115 || w[stem - 1] == 116 else { return }  // s or t
        }
        w.removeLast(suffix.utf8.count)
    }

    private static func step5(_ w: inout [UInt8]) {
        if w.last == 101 {
            let m = measure(w, w.count - 1)
            if m > 1 || (m == 1 && !endsCVC(w, w.count - 1)) { w.removeLast() }
        }
        if w.count >= 2, w.last == 108, endsDoubleConsonant(w, w.count), measure(w, w.count) > 1 { w.removeLast() }
    }
}
