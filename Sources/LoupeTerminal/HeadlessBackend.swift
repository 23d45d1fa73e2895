import LoupeTUI

/// A backend without a terminal: input comes from a script, presented frames are recorded.
///
/// Tests and benchmarks run the real loop on it, the way lazygit's integration tests run the
/// app on a simulation screen.
package final class HeadlessBackend: TerminalBackend {
    package private(set) var size: Size
    package private(set) var frames: [Frame] = []
    package private(set) var suspendCount = 0
    package private(set) var isShutDown = false
    /// What ``copyToClipboard(_:)`` was given, in order.
    package private(set) var clipboard: [String] = []
    private var script: [InputEvent]

    package init(size: Size, script: [InputEvent] = []) {
        self.size = size
        self.script = script
    }

    package func copyToClipboard(_ text: String) { clipboard.append(text) }

    /// The last presented frame.
    package var lastFrame: Frame? { frames.last }

    /// Adds events to the end of the script.
    package func enqueue(_ events: [InputEvent]) { script.append(contentsOf: events) }

    /// True when every scripted event has been delivered.
    package var isScriptExhausted: Bool { script.isEmpty }

    package func present(_ frame: Frame) { frames.append(frame) }

    package func nextEvent(timeoutMilliseconds: Int) -> InputEvent? {
        guard !script.isEmpty else { return nil }
        let event = script.removeFirst()
        if case .resize(let newSize) = event { size = newSize }
        return event
    }

    package func suspend() { suspendCount += 1 }

    /// What ``runInTerminal(_:)`` ran, in order.
    package private(set) var externalRuns: [[String]] = []

    /// Runs the program for real (a test's editor script), with no terminal to hand over.
    package func runInTerminal(_ arguments: [String]) -> Int32 {
        externalRuns.append(arguments)
        return ExternalProcess.run(arguments)
    }
    package func invalidate() {}
    package func shutdown() { isShutDown = true }
}
