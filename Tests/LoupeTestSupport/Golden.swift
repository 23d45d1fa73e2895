import Foundation
import LoupeBase
import LoupeTUI

/// Golden files: a frame's expected text and styles kept next to the tests, rewritten with
/// `RECORD_SNAPSHOTS=1`.
///
/// Tests call ``expectFrame(_:matchesGolden:text:sourceLocation:)``, which checks `NAME.txt` and
/// `NAME.styles.txt` (a ``StyleMap``).
/// Recording a file is always reported as a failure, so a recording run is never green.
package enum Golden {
    package struct Mismatch: Error, CustomStringConvertible {
        package var description: String
    }

    /// Which text of a frame its `NAME.txt` golden holds.
    package enum TextLayout: Sendable {
        /// ``Frame/text()``: rows without trailing spaces, as `tmux capture-pane -p` prints them.
        case trimmed
        /// ``Frame/paddedText()``: every row padded with spaces to the frame's width.
        case padded
    }

    /// True when the environment asks for golden files to be rewritten (`RECORD_SNAPSHOTS=1`).
    package static var isRecordingRequested: Bool {
        ProcessInfo.processInfo.environment["RECORD_SNAPSHOTS"] == "1"
    }

    /// The `__snapshots__` folder beside the test file at `path`.
    package static func directory(besideTestFile path: String) -> URL {
        URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent("__snapshots__")
    }

    /// Checks `frame` against `NAME.txt` (its text laid out as `layout`) and `NAME.styles.txt`
    /// (its ``StyleMap``) in `directory`.
    ///
    /// A missing file, or either file when `isRecording`, is written from the frame (creating
    /// `directory` if needed) and reported. A text difference is reported as a line diff; a
    /// style difference as the first rows whose styles differ, with the legend entries involved.
    ///
    /// - Returns: one readable message per file that differs or was recorded; empty when both match.
    package static func check(
        _ frame: Frame, named name: String, in directory: URL, text layout: TextLayout = .trimmed, isRecording: Bool
    ) -> [String] {
        let text = layout == .padded ? frame.paddedText() : frame.text()
        let styles = StyleMap(frame)
        let textFile = name + ".txt"
        let stylesFile = name + ".styles.txt"
        let textFailure = check(text, file: textFile, in: directory, isRecording: isRecording) { expected in
            lineDiff(expected: expected, actual: text, file: textFile)
        }
        let stylesFailure = check(styles.text, file: stylesFile, in: directory, isRecording: isRecording) { expected in
            styleDiff(expected: expected, actual: styles, file: stylesFile)
        }
        return [textFailure, stylesFailure].compactMap { $0 }
    }

    /// Compares `actual` with the file, or records it; nil when they match and nothing was recorded.
    private static func check(
        _ actual: String, file: String, in directory: URL, isRecording: Bool, describe: (String) -> String
    ) -> String? {
        let url = directory.appendingPathComponent(file)
        let expected = (try? String(contentsOf: url, encoding: .utf8)).map { stored in
            stored.hasSuffix("\n") ? String(stored.dropLast()) : stored
        }
        guard let expected, !isRecording else {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try (actual + "\n").write(to: url, atomically: true, encoding: .utf8)
            } catch {
                return "could not record golden \(file) at \(url.path): \(error)"
            }
            guard let expected else { return "recorded missing golden \(file); check it in and re-run" }
            let change = expected == actual ? "unchanged" : "changed"
            return "recorded golden \(file) (\(change)); re-run without RECORD_SNAPSHOTS=1 to check it"
        }
        return expected == actual ? nil : describe(expected)
    }

    private static func lineDiff(expected: String, actual: String, file: String) -> String {
        let left = expected.split(separator: "\n", omittingEmptySubsequences: false)
        let right = actual.split(separator: "\n", omittingEmptySubsequences: false)
        var lines = ["golden \(file) differs (RECORD_SNAPSHOTS=1 rewrites it):"]
        for index in 0..<max(left.count, right.count) {
            let l = index < left.count ? String(left[index]) : "<none>"
            let r = index < right.count ? String(right[index]) : "<none>"
            if l != r {
                lines.append(String(format: "%3d - ", index + 1) + l)
                lines.append(String(format: "%3d + ", index + 1) + r)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// The first rows whose styles differ, each as expected and actual keys, a `^` under every
    /// differing column, and the legend entries those columns use on either side.
    private static func styleDiff(expected text: String, actual: StyleMap, file: String) -> String {
        // A hand-edited file that no longer parses, or one that differs only in how its legend is
        // written, still gets a plain line diff.
        guard let expected = StyleMap(parsing: text) else {
            return lineDiff(expected: text, actual: actual.text, file: file)
        }
        let rows = actual.rowsStyledDifferently(from: expected)
        guard !rows.isEmpty else { return lineDiff(expected: text, actual: actual.text, file: file) }
        let shownRows = 5
        var lines = ["golden \(file) differs in \(rows.count) row(s) (RECORD_SNAPSHOTS=1 rewrites it):"]
        for y in rows.prefix(shownRows) {
            let columns = actual.columnsStyledDifferently(inRow: y, from: expected)
            let left = y < expected.rows.count ? Array(expected.rows[y]) : []
            let right = y < actual.rows.count ? Array(actual.rows[y]) : []
            var marker = Array(repeating: Character(" "), count: max(left.count, right.count))
            for x in columns { marker[x] = "^" }
            while marker.last == " " { marker.removeLast() }
            lines.append("y=\(y), first at x=\(columns[0]):")
            lines.append("  - " + String(left))
            lines.append("  + " + String(right))
            lines.append("    " + String(marker))
            lines += legendLines(keys: columns.compactMap { $0 < left.count ? left[$0] : nil }, in: expected, sign: "-")
            lines += legendLines(keys: columns.compactMap { $0 < right.count ? right[$0] : nil }, in: actual, sign: "+")
        }
        if rows.count > shownRows { lines.append("… and \(rows.count - shownRows) more row(s)") }
        return lines.joined(separator: "\n")
    }

    /// `sign key: style` for each distinct key in order, `?` for a key the legend lacks.
    private static func legendLines(keys: [Character], in map: StyleMap, sign: String) -> [String] {
        var seen: Set<Character> = []
        return keys.filter { seen.insert($0).inserted }.map { key in
            "  \(sign) \(key): \(map.style(of: key) ?? "? (not in the legend)")"
        }
    }
}

extension Frame {
    /// The cells of `areas`, each clipped to the frame, stacked top to bottom into one frame as
    /// wide as the widest: a golden of a part of the screen (a panel's rectangle and its footer
    /// row) that the rest of the screen cannot change.
    ///
    /// Half of a wide glyph that an area's edge cuts becomes a blank in the glyph's style, so
    /// the crop never holds a continuation cell without its lead or the reverse.
    package func cropped(to areas: [Rect]) -> Frame {
        let parts = areas.map { $0.intersection(area) }.filter { !$0.isEmpty }
        var crop = Frame(
            size: Size(width: parts.map(\.width).max() ?? 0, height: parts.reduce(0) { $0 + $1.height }))
        var top = 0
        for part in parts {
            for y in part.y..<part.maxY {
                for x in part.x..<part.maxX {
                    let cell = self[x, y]
                    let cutLeft = cell.isContinuation && x == part.x
                    let cutRight = cell.width > 1 && x + Int(cell.width) > part.maxX
                    crop[x - part.x, top + y - part.y] = cutLeft || cutRight ? .blank(cell.style) : cell
                }
            }
            top += part.height
        }
        return crop
    }

    /// The frame's text with every row padded to the frame width, for fixed-width goldens.
    package func paddedText() -> String {
        (0..<height).map { y in
            let row = rowText(y)
            return row + String(repeating: " ", count: max(0, width - TextWidth.of(row)))
        }.joined(separator: "\n")
    }
}
