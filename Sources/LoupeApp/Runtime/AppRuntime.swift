import Dispatch
import Foundation
import LoupeKit
import LoupeTUI
import LoupeTerminal

/// The TUI loop: poll input, drain job reports, fold messages through ``AppState/update(_:)``,
/// run effects, and present a new frame when the screen changed.
///
/// It runs on one thread (the backend's). Commands run on background threads and report back
/// through a mailbox.
package final class AppRuntime {
    package private(set) var state: AppState
    private let backend: any TerminalBackend
    private let environment: AppEnvironment
    private let mailbox = Mailbox()
    private var reporters: [JobID: JobReporter] = [:]
    private var lastFrame: Frame?
    private var needsRender = true
    package private(set) var isFinished = false
    /// Called once, right after the first frame was presented (benchmarks time it).
    package var onFirstFrame: (() -> Void)?

    package init(state: AppState, backend: any TerminalBackend, environment: AppEnvironment) {
        self.state = state
        self.backend = backend
        self.environment = environment
        self.state.size = backend.size
        self.state.now = environment.now()
        var effects: [Effect] = []
        for panel in self.state.panels {
            for effect in panel.initialEffects {
                if case .app(let appEffect) = effect { effects.append(appEffect) }
            }
        }
        for effect in effects { perform(effect) }
    }

    /// Starts a command line as a job, as the `:` line does (`loupe --run LINE`).
    package func start(_ line: String) {
        for effect in state.start(line) { perform(effect) }
        needsRender = true
    }

    /// Runs until the user quits or a termination signal arrives.
    package func run() {
        while !isFinished { step(timeoutMilliseconds: state.jobs.isEmpty && !state.wantsTicks ? 250 : 50) }
    }

    /// One turn of the loop.
    package func step(timeoutMilliseconds: Int) {
        if needsRender { present() }
        var messages: [Msg] = []
        if let event = backend.nextEvent(timeoutMilliseconds: timeoutMilliseconds) { messages.append(.input(event)) }
        messages += mailbox.drain()
        if let signal = TerminationSignals.take() { messages.append(.terminate(signal)) }
        if !state.jobs.isEmpty || !messages.isEmpty || state.wantsTicks { messages.append(.tick(environment.now())) }
        for msg in messages {
            if case .jobFinished(let id, _) = msg { reporters[id] = nil }
            let effects = state.update(msg)
            for effect in effects { perform(effect) }
            needsRender = true
        }
        if needsRender, !isFinished { present() }
    }

    /// Waits until every running job has reported back (tests and benchmarks).
    package func waitForJobs(timeoutSeconds: Double = 30) {
        let deadline = environment.now() + timeoutSeconds
        while !state.jobs.isEmpty, environment.now() < deadline {
            step(timeoutMilliseconds: 5)
            usleep(2000)
        }
    }

    private func present() {
        needsRender = false
        let frame = state.render()
        guard frame != lastFrame else { return }
        backend.present(frame)
        let first = lastFrame == nil
        lastFrame = frame
        if first, let onFirstFrame {
            self.onFirstFrame = nil
            onFirstFrame()
        }
    }

    private func perform(_ effect: Effect) {
        switch effect {
        case .quit:
            for reporter in reporters.values { reporter.cancel() }
            isFinished = true
        case .suspend:
            backend.suspend()
            lastFrame = nil
        case .redraw:
            backend.invalidate()
            lastFrame = nil
        case .cancelJobs:
            for reporter in reporters.values { reporter.cancel() }
        case .recordHistory(let line):
            if let record = environment.recordHistory {
                DispatchQueue.global(qos: .utility).async {
                    // History is a convenience: a busy workspace must neither block the UI nor
                    // fail the command, so a write that cannot happen is dropped.
                    try? record(line)
                }
            }
        case .runCommand(let id, let line):
            run(line, id: id)
        case .writeFile(let path, let contents):
            background(qos: .utility) {
                do {
                    try contents.write(toFile: path, atomically: true, encoding: .utf8)
                    return .fileWritten(path: path, error: nil)
                } catch {
                    return .fileWritten(path: path, error: error.localizedDescription)
                }
            }
        case .port(let call):
            let ports = environment.ports
            background { .answered(call.answer(using: ports)) }
        }
    }

    /// Runs `work` on a background queue and posts the message it makes: every read and write
    /// the panels ask for goes through here, so none blocks the loop.
    private func background(qos: DispatchQoS.QoSClass = .userInitiated, _ work: @escaping @Sendable () -> Msg) {
        let mailbox = self.mailbox
        DispatchQueue.global(qos: qos).async { mailbox.post(work()) }
    }

    private func run(_ line: String, id: JobID) {
        let mailbox = self.mailbox
        let reporter = JobReporter(id: id) { id, progress in mailbox.post(.jobProgress(id, progress)) }
        reporters[id] = reporter
        let commands = environment.commands
        let columns = max(40, state.size.width - 4)
        DispatchQueue.global(qos: .userInitiated).async {
            let outcome = commands.execute(line, reporter: reporter, columns: columns)
            mailbox.post(.jobFinished(id, outcome))
        }
    }
}
