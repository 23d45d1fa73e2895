import LoupeTUI
import Testing

/// Expects `frame` to match its golden files beside the calling test file:
/// `__snapshots__/NAME.txt` (its text) and `__snapshots__/NAME.styles.txt` (its ``StyleMap``).
///
/// Records one issue per file that differs: a line diff for the text, the first differing rows
/// and their legend entries for the styles. A missing file is written and reported, and under
/// `RECORD_SNAPSHOTS=1` both files are rewritten and reported, so a recording run is never
/// green; re-run without it to check. `layout` picks the text of `NAME.txt`: `.trimmed` is
/// `frame.text()`, `.padded` keeps every row's trailing blanks.
package func expectFrame(
    _ frame: Frame, matchesGolden name: String, text layout: Golden.TextLayout = .trimmed,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let failures = Golden.check(
        frame, named: name, in: Golden.directory(besideTestFile: sourceLocation.filePath), text: layout,
        isRecording: Golden.isRecordingRequested)
    for failure in failures {
        Issue.record(Comment(rawValue: failure), sourceLocation: sourceLocation)
    }
}
