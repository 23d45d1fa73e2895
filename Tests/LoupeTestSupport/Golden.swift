import Foundation
import LoupeTUI

/// Golden files: expected text kept next to the tests, rewritten with `RECORD_SNAPSHOTS=1`.
package enum Golden {
    package struct Mismatch: Error, CustomStringConvertible {
        package var description: String
    }

    /// Compares `actual` with `__snapshots__/NAME.txt` beside the calling test file.
    ///
    /// - Returns: nil when they match (or the file was recorded), else a readable diff.
    package static func compare(_ actual: String, named name: String, file: StaticString = #filePath) -> String? {
        let directory = URL(fileURLWithPath: "\(file)").deletingLastPathComponent().appendingPathComponent(
            "__snapshots__")
        let url = directory.appendingPathComponent(name + ".txt")
        let record = ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1"
        if record || !FileManager.default.fileExists(atPath: url.path) {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try? (actual + "\n").write(to: url, atomically: true, encoding: .utf8)
            return record ? nil : "recorded missing golden \(name).txt; check it in and re-run"
        }
        let expected = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
        let trimmedExpected = expected.hasSuffix("\n") ? String(expected.dropLast()) : expected
        guard trimmedExpected != actual else { return nil }
        return diff(expected: trimmedExpected, actual: actual, name: name)
    }

    private static func diff(expected: String, actual: String, name: String) -> String {
        let left = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let right = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var lines = ["golden \(name).txt differs (RECORD_SNAPSHOTS=1 rewrites it):"]
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? String(left[index]) : "<none>"
            let r = index < right.count ? String(right[index]) : "<none>"
            if l != r {
                lines.append(String(format: "%3d - %@", index + 1, l))
                lines.append(String(format: "%3d + %@", index + 1, r))
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension Frame {
    /// The frame's text with every row padded to the frame width, for fixed-width goldens.
    package func paddedText() -> String {
        (0..<height).map { y in
            let row = rowText(y)
            return row + String(repeating: " ", count: max(0, width - TextWidth.of(row)))
        }.joined(separator: "\n")
    }
}
