import LoupeTUI

/// Where the shell's parts go for a terminal size. Render and mouse hit-testing both use it,
/// so a click lands on what was drawn.
package struct ShellLayout: Hashable, Sendable {
    /// Below this size the shell shows a "too small" screen instead of a broken one.
    package static let minimumSize = Size(width: 50, height: 12)

    package var tabs: Rect
    package var panel: Rect
    package var output: Rect
    package var status: Rect
    package var footer: Rect

    /// `outputRows` is how many lines the output pane has to show: the pane is as tall as they
    /// are (plus its border) up to two fifths of the body.
    package init(size: Size, outputVisible: Bool, outputRows: Int, zoomed: Bool, focus: AppState.Focus) {
        let rows = Rect(size: size).split(.vertical, [.length(1), .fill(1), .length(1), .length(1)])
        tabs = rows[0]
        status = rows[2]
        footer = rows[3]
        let body = rows[1]
        let empty = Rect(x: body.x, y: body.maxY, width: body.width, height: 0)
        switch (outputVisible, zoomed, focus) {
        case (false, _, _), (true, true, .panel):
            panel = body
            output = empty
        case (true, true, .output):
            panel = Rect(x: body.x, y: body.y, width: body.width, height: 0)
            output = body
        case (true, false, _):
            let tallest = min(max(6, body.height * 2 / 5), body.height - 4)
            let outputHeight = min(tallest - 2, max(1, outputRows)) + 2
            let parts = body.split(.vertical, [.fill(1), .length(outputHeight)])
            panel = parts[0]
            output = parts[1]
        }
    }

    package static func isTooSmall(_ size: Size) -> Bool {
        size.width < minimumSize.width || size.height < minimumSize.height
    }
}
