import Dispatch
import Foundation
import Glibc
import LoupeBase
import LoupeKit
import LoupeTUI
import LoupeTerminal
import Synchronization

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
    /// Background work started and not yet finished: reads, commands, history writes.
    private let inFlight = InFlight()
    /// Panel reads under way: while one is, the loop asks for input every few milliseconds so
    /// its answer is drawn at once. A received span is a watch, a list read and a trace read:
    /// waiting the idle interval after each made a new step take 300 ms to show.
    private let reads = InFlight()
    private var reporters: [JobID: JobReporter] = [:]
    private var lastFrame: Frame?
    private var needsRender = true
    package private(set) var isFinished = false
    /// When the workspace watcher and the listener were last asked (monotonic seconds).
    private var lastWatch = 0.0
    private var lastListening: String?
    private var lastUnreachable: String?
    /// How often the watcher is asked: a received span is on screen within about this (plus a read).
    static let watchInterval = 0.1
    /// Called once, right after the first frame was presented (benchmarks time it).
    package var onFirstFrame: (() -> Void)?

    package init(state: AppState, backend: any TerminalBackend, environment: AppEnvironment) {
        self.state = state
        self.backend = backend
        self.environment = environment
        self.state.size = backend.size
        self.state.now = environment.now()
        // A message set before the loop (a theme warning) is timed from now, not from zero.
        if let message = self.state.message { self.state.message = message }
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
        let idle = environment.workspaceChanged == nil ? 250 : Int(Self.watchInterval * 1000)
        while !isFinished {
            // An answer that came while the last turn ran is taken at once, not after the wait.
            let timeout =
                !mailbox.isEmpty ? 0 : reads.count > 0 ? 5 : state.jobs.isEmpty && !state.wantsTicks ? idle : 50
            step(timeoutMilliseconds: timeout)
        }
    }

    /// One turn of the loop.
    package func step(timeoutMilliseconds: Int) {
        if needsRender { present() }
        // Messages set while folding this turn's input are timed from now: ticks stop while idle,
        // so the last tick may be minutes old.
        state.now = environment.now()
        var messages: [Msg] = []
        if let event = backend.nextEvent(timeoutMilliseconds: timeoutMilliseconds) { messages.append(.input(event)) }
        messages += mailbox.drain()
        if let signal = TerminationSignals.take() { messages.append(.terminate(signal)) }
        messages += watch()
        if !state.jobs.isEmpty || !messages.isEmpty || state.wantsTicks { messages.append(.tick(environment.now())) }
        for msg in messages {
            switch msg {
            case .jobFinished(let id, _), .readFinished(let id, _): reporters[id] = nil
            case .input, .tick, .jobProgress, .terminate, .fileWritten, .edited, .answered, .navigate,
                .workspaceChanged, .listening, .unreachable:
                // Only a finished job's reporter is let go here; the reducer folds every message.
                break
            }
            let effects = state.update(msg)
            for effect in effects { perform(effect) }
            needsRender = true
        }
        if needsRender, !isFinished { present() }
    }

    /// After the loop: asks every job to stop and waits up to `graceSeconds` for all background
    /// work to end, showing what it waits for. True when nothing runs any more; false when work
    /// is still running (a model call that does not return, a second signal cut the wait short),
    /// and the process must then leave with `_exit`: a normal exit would run OpenBLAS's shutdown,
    /// which waits for its worker threads, forever if one is still in a `cblas_sgemm`.
    package func finish(graceSeconds: Double = 3) -> Bool {
        for reporter in reporters.values { reporter.cancel() }
        guard inFlight.count > 0 else { return true }
        let titles = state.jobs.map(\.title)
        state.message = StatusMessage(
            text: "Stopping " + (titles.isEmpty ? "background work" : titles.prefix(2).joined(separator: ", ")) + "…",
            level: .warn)
        present()
        let deadline = environment.now() + graceSeconds
        while inFlight.count > 0, environment.now() < deadline, TerminationSignals.take() == nil {
            _ = mailbox.drain()
            usleep(10_000)
        }
        return inFlight.count == 0
    }

    /// Waits until every running job has reported back (tests and benchmarks).
    package func waitForJobs(timeoutSeconds: Double = 30) {
        let deadline = environment.now() + timeoutSeconds
        while !state.jobs.isEmpty, environment.now() < deadline {
            step(timeoutMilliseconds: 5)
            usleep(2000)
        }
    }

    /// Asks the watcher whether the workspace changed and the listener what it does, at most
    /// every ``watchInterval``.
    private func watch() -> [Msg] {
        let now = environment.now()
        guard now - lastWatch >= Self.watchInterval else { return [] }
        lastWatch = now
        var messages: [Msg] = []
        if environment.workspaceChanged?() == true { messages.append(.workspaceChanged) }
        if let unreachable = environment.unreachable {
            let reason = unreachable()
            if reason != lastUnreachable {
                lastUnreachable = reason
                messages.append(.unreachable(reason))
            }
        }
        if let listener = environment.listener {
            let status = listener()
            if status != lastListening {
                lastListening = status
                messages.append(.listening(status))
            }
        }
        return messages
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
        case .copy(let text):
            backend.copyToClipboard(text)
        case .editText(let name, let text):
            let (edited, error) = edit(text, name: name)
            lastFrame = nil
            mailbox.post(.edited(name, text: edited, error: error))
        case .recordHistory(let line):
            if let record = environment.recordHistory {
                let inFlight = self.inFlight
                inFlight.enter()
                DispatchQueue.global(qos: .utility).async {
                    defer { inFlight.leave() }
                    // History is a convenience: a busy workspace must neither block the UI nor
                    // fail the command, so a write that cannot happen is dropped.
                    try? record(line)
                }
            }
        case .runCommand(let id, let line):
            run(line, id: id, place: .open)
        case .runCommandIn(let id, let line, let place):
            run(line, id: id, place: place)
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
            background(counting: reads) { .answered(call.answer(using: ports)) }
        case .portJob(let id, let call):
            let reporter = makeReporter(id)
            let ports = environment.ports
            background { .readFinished(id, call.answer(using: ports, reporter: reporter)) }
        }
    }

    /// Writes `text` to a private temporary file, hands the terminal to the editor on it, and
    /// reads back what was saved. The loop waits: the editor owns the terminal meanwhile.
    private func edit(_ text: String, name: String) -> (text: String?, error: String?) {
        let directory = FileManager.default.temporaryDirectory.path
        let path = directory + "/loupe-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).txt"
        // Created new (never through a link someone left there) and private from the start.
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return (nil, "cannot write a temporary file in \(directory)") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count else { return (nil, "cannot write a temporary file in \(directory)") }
        defer { try? FileManager.default.removeItem(atPath: path) }
        // The editor setting may carry arguments (`code --wait`): the shell splits it, and the
        // file is passed as its own argument so no path is ever re-parsed.
        let status = backend.runInTerminal(["/bin/sh", "-c", environment.editor + " \"$1\"", "loupe-editor", path])
        guard status == 0 else {
            return (
                nil,
                status < 0
                    ? "could not start the editor \(UntrustedText.sanitized(environment.editor))"
                    : status == 127
                        ? "no editor \(UntrustedText.sanitized(environment.editor)) (set $VISUAL or $EDITOR); nothing changed"
                        : "the editor exited with status \(status); nothing changed"
            )
        }
        guard let data = FileManager.default.contents(atPath: path) else { return (nil, "the edited file is gone") }
        return (String(decoding: data, as: UTF8.self), nil)
    }

    /// Runs `work` on a background queue and posts the message it makes: every read and write
    /// the panels ask for goes through here, so none blocks the loop.
    ///
    /// - Parameter counting: also counted there until its message is posted.
    private func background(
        qos: DispatchQoS.QoSClass = .userInitiated, counting also: InFlight? = nil,
        _ work: @escaping @Sendable () -> Msg
    ) {
        let mailbox = self.mailbox
        let inFlight = self.inFlight
        inFlight.enter()
        also?.enter()
        DispatchQueue.global(qos: qos).async {
            mailbox.post(work())
            also?.leave()
            inFlight.leave()
        }
    }

    private func makeReporter(_ id: JobID) -> JobReporter {
        let mailbox = self.mailbox
        let reporter = JobReporter(id: id) { id, progress in mailbox.post(.jobProgress(id, progress)) }
        reporters[id] = reporter
        return reporter
    }

    private func run(_ line: String, id: JobID, place: CommandPlace) {
        let mailbox = self.mailbox
        let reporter = makeReporter(id)
        let commands = environment.commands
        let columns = max(40, state.size.width - 4)
        let inFlight = self.inFlight
        inFlight.enter()
        DispatchQueue.global(qos: .userInitiated).async {
            let outcome = commands.execute(line, reporter: reporter, columns: columns, place: place)
            mailbox.post(.jobFinished(id, outcome))
            inFlight.leave()
        }
    }

    /// Counts background work, so that quitting can wait for it.
    private final class InFlight: Sendable {
        private let value = Atomic<Int>(0)

        var count: Int { value.load(ordering: .acquiring) }
        func enter() { value.add(1, ordering: .relaxed) }
        func leave() { value.subtract(1, ordering: .releasing) }
    }
}
