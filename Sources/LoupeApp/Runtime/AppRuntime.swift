import Dispatch
import Foundation
import LoupeKit
import LoupeStore
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
            if let workspace = environment.workspace {
                DispatchQueue.global(qos: .utility).async {
                    // History is a convenience: a busy workspace must neither block the UI nor
                    // fail the command, so a write that cannot happen is dropped.
                    try? workspace.recordHistory(line, source: .tui)
                }
            }
        case .runCommand(let id, let line):
            run(line, id: id)
        case .listNotebooks:
            let directories = environment.notebookDirectories
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                mailbox.post(.notebooksListed(AppEnvironment.findNotebooks(in: directories)))
            }
        case .analyzeAttention(let request):
            let mailbox = self.mailbox
            guard let analyze = environment.analyzeAttention else {
                mailbox.post(.attentionAnalyzed(request, .failed("no model: run scripts/fetch-minilm")))
                return
            }
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    mailbox.post(.attentionAnalyzed(request, .analyzed(try analyze(request))))
                } catch {
                    mailbox.post(.attentionAnalyzed(request, .failed("\(error)")))
                }
            }
        case .loadRoofline:
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                mailbox.post(.rooflineLoaded((try? RooflineModel.load(from: workspace)) ?? RooflineModel(profiles: [])))
            }
        case .searchRetrieval(let request):
            let mailbox = self.mailbox
            guard let search = environment.search else {
                mailbox.post(.retrievalSearched(request, .failed("no workspace to search")))
                return
            }
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    mailbox.post(.retrievalSearched(request, .found(try search(request))))
                } catch {
                    mailbox.post(.retrievalSearched(request, .failed("\(error)")))
                }
            }
        case .loadDocument(let id):
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                let document = (try? workspace.document(externalID: id)).flatMap { $0 }.map {
                    RetrievalDocument(title: $0.title, body: $0.body)
                }
                mailbox.post(.retrievalDocument(id, document))
            }
        case .loadTraces:
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                mailbox.post(.tracesLoaded((try? TraceService(workspace: workspace).list()) ?? []))
            }
        case .openTrace(let id):
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    mailbox.post(.traceOpened(id, .loaded(try TraceService(workspace: workspace).load(id))))
                } catch {
                    mailbox.post(.traceOpened(id, .failed("\(error)")))
                }
            }
        case .loadSpan(let trace, let ordinal):
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                let loaded = try? TraceService(workspace: workspace).payload(trace: trace, ordinal: ordinal)
                mailbox.post(
                    .spanLoaded(
                        trace: trace, ordinal: ordinal, loaded.map { SpanDetail(payload: $0.payload, raw: $0.raw) }))
            }
        case .searchTrace(let trace, let query):
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                let found = (try? workspace.searchSpans(trace: trace, text: query)) ?? []
                mailbox.post(.traceSearched(trace: trace, query: query, ordinals: found))
            }
        case .diffTraces(let left, let right):
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    let diff = try TraceService(workspace: workspace).diff(left, right)
                    mailbox.post(.tracesDiffed(left: left, right: right, .loaded(diff)))
                } catch {
                    mailbox.post(.tracesDiffed(left: left, right: right, .failed("\(error)")))
                }
            }
        case .loadEvals:
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            let directories = environment.evalSuiteDirectories
            DispatchQueue.global(qos: .userInitiated).async {
                let suites = AppEnvironment.findSuites(in: directories)
                do {
                    let runs = try EvalService(workspace: workspace, models: .standard(environment: [:])).list()
                    mailbox.post(.evalsLoaded(EvalsOverview(runs: runs, suites: suites)))
                } catch {
                    mailbox.post(.evalsLoaded(EvalsOverview(runs: [], suites: suites, error: "\(error)")))
                }
            }
        case .loadEvalRun(let id):
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    let detail = try EvalService(workspace: workspace, models: .standard(environment: [:])).detail(id)
                    mailbox.post(.evalRunLoaded(id, .loaded(detail)))
                } catch {
                    mailbox.post(.evalRunLoaded(id, .failed("\(error)")))
                }
            }
        case .compareEvalRuns(let baseline, let run):
            guard let workspace = environment.workspace else { return }
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                do {
                    let compared = try EvalService(workspace: workspace, models: .standard(environment: [:])).compare(
                        baseline, run)
                    mailbox.post(.evalsCompared(baseline: baseline, run: run, .loaded(compared)))
                } catch {
                    mailbox.post(.evalsCompared(baseline: baseline, run: run, .failed("\(error)")))
                }
            }
        case .loadSAE, .loadSAEFeatures, .loadSAEFeature, .activateSAE, .labelSAEFeature:
            performSAE(effect)
        case .writeFile(let path, let contents):
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .utility).async {
                do {
                    try contents.write(toFile: path, atomically: true, encoding: .utf8)
                    mailbox.post(.fileWritten(path: path, error: nil))
                } catch {
                    mailbox.post(.fileWritten(path: path, error: error.localizedDescription))
                }
            }
        case .openNotebook(let path):
            let mailbox = self.mailbox
            DispatchQueue.global(qos: .userInitiated).async {
                let result: NotebookLoad
                do {
                    result = .loaded(Notebook.parse(try String(contentsOfFile: path, encoding: .utf8)))
                } catch {
                    result = .failed("\(path) cannot be read: \(error.localizedDescription)")
                }
                mailbox.post(.notebookOpened(path: path, result: result))
            }
        }
    }

    /// The SAE panel's reads, each on a background queue (indexing an SAE's features takes seconds).
    private func performSAE(_ effect: Effect) {
        let mailbox = self.mailbox
        guard let browser = environment.sae else {
            if case .loadSAE = effect { mailbox.post(.saeListed(.failed("no workspace"))) }
            return
        }
        DispatchQueue.global(qos: .userInitiated).async {
            switch effect {
            case .loadSAE:
                mailbox.post(.saeListed(.from { try browser.listings() }))
            case .loadSAEFeatures(let model):
                mailbox.post(.saeFeaturesLoaded(model, .from { try browser.index(model).summaries }))
            case .loadSAEFeature(let model, let feature):
                mailbox.post(
                    .saeFeatureLoaded(
                        model: model, feature: feature, .from { try browser.card(model: model, feature: feature) }))
            case .activateSAE(let model, let text):
                mailbox.post(
                    .saeActivated(model: model, text: text, .from { try browser.activate(model: model, text: text) }))
            case .labelSAEFeature(let model, let feature, let label):
                mailbox.post(
                    .saeFeaturesLoaded(model, .from { try browser.label(model: model, feature: feature, label: label) })
                )
            default:
                break
            }
        }
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
