import Foundation
import LoupeKit
import LoupeReceiver
import LoupeStore
import Synchronization

/// The TUI's own OTLP receiver (`loupe --listen`): `loupe serve`'s servers on OTLP's ports,
/// writing into the open workspace while the TUI shows what arrives. Stopped, its queue
/// committed, when the TUI closes.
final class Listener: Sendable {
    private let ingest: TraceIngest
    /// Serving, or why it could not start (a token that is empty).
    private let serving: Result<TraceReceiver.Serving, ReceiverConfiguration.Invalid>
    /// Where it listens, once bound; set by the serving task.
    private final class Bound: Sendable {
        let addresses = Mutex<TraceReceiver.Addresses?>(nil)
    }

    private let bound = Bound()

    init(workspace: Workspace, environment: [String: String]) {
        ingest = TraceIngest(workspace: workspace)
        var configuration = ReceiverConfiguration()
        configuration.token = environment["LOUPE_OTLP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        let bound = bound
        let ingest = ingest
        serving = Result { () throws(ReceiverConfiguration.Invalid) in
            try TraceReceiver(configuration: configuration, ingest: ingest)
        }.map { receiver in receiver.start { addresses in bound.addresses.withLock { $0 = addresses } } }
    }

    /// "OTLP 127.0.0.1:4318 · 12 spans/s", or why it does not listen.
    var status: String {
        let failure: String? =
            switch serving {
            case .failure(let invalid): invalid.description
            case .success(let serving): serving.error.map { "\($0)" }
            }
        if let failure { return "OTLP off: " + failure.prefix(60) }
        guard let addresses = bound.addresses.withLock({ $0 }) else { return "OTLP starting…" }
        let rate = ingest.statistics.spansPerSecond
        return "OTLP " + (addresses.http ?? addresses.grpc ?? "") + String(format: " · %.0f spans/s", rate)
    }

    /// Stops taking requests, commits those in flight, and returns once both are done.
    func stop() {
        switch serving {
        case .success(let serving):
            serving.requestStop()
            try? serving.wait()
        case .failure: ingest.drain()
        }
    }
}
