import Foundation
import LoupeAgents
import LoupeBase

/// Reads a judge's grade: Inspect's `GRADE: C|P|I` convention (last one wins), else a leading
/// yes/no, correct/incorrect, pass/fail, else a number in [0, 1].
package enum JudgeVerdict {
    package static func value(_ verdict: String) -> Double? {
        let upper = verdict.uppercased()
        if let range = upper.range(of: "GRADE:", options: .backwards) {
            let rest = upper[range.upperBound...].drop { $0 == " " || $0 == "*" }
            switch rest.first {
            case "C": return 1
            case "P": return 0.5
            case "I": return 0
            default: break
            }
        }
        let words = upper.split { !$0.isLetter && !$0.isNumber && $0 != "." }
        guard let first = words.first else { return nil }
        switch first {
        case "YES", "CORRECT", "PASS", "TRUE": return 1
        case "NO", "INCORRECT", "FAIL", "FALSE", "WRONG": return 0
        default: break
        }
        if let number = Double(first), (0...1).contains(number) { return number }
        return nil
    }

    static func summary(_ verdict: String) -> String {
        let line = verdict.split(whereSeparator: \.isNewline).last.map(String.init) ?? verdict
        return line.count > 80 ? line.prefix(77) + "…" : line
    }
}
