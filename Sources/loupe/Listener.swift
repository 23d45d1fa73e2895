import Dispatch
import Foundation
import LoupeKit
import LoupeReceiver
import LoupeStore
import Synchronization

/// The TUI's own OTLP receiver (`loupe --listen`): `loupe serve`'s servers on OTLP's ports,
/// writing into the open workspace while the TUI shows what arrives. Stopped, its queue
/// committed, when the TUI closes.
final class Listener: Sendable {
    private let receiver: TraceReceiver?
    private let ingest: TraceIngest
    /// Where it listens, or why it does not; set by the serving task.
    private final class State: Sendable {
        let value = Mutex<(addresses: TraceReceiver.Addresses?, failure: String?)>((nil, nil))
        let served = DispatchSemaphore(value: 0)
    }

    private let state = State()

    init(workspace: Workspace, environment: [String: String]) {
        ingest = TraceIngest(workspace: workspace)
        var configuration = ReceiverConfiguration()
        configuration.token = environment["LOUPE_OTLP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
        do {
            receiver = try TraceReceiver(configuration: configuration, ingest: ingest)
        } catch {
            receiver = nil
            state.value.withLock { $0.failure = error.description }
            state.served.signal()
            return
        }
        let receiver = receiver
        let state = state
        Task {
            do {
                try await receiver?.run { addresses in state.value.withLock { $0.addresses = addresses } }
            } catch {
                state.value.withLock { $0.failure = "\(error)" }
            }
            state.served.signal()
        }
    }

    /// "OTLP 127.0.0.1:4318 · 12 spans/s", or why it does not listen.
    var status: String {
        let (addresses, failure) = state.value.withLock { ($0.addresses, $0.failure) }
        if let failure { return "OTLP off: " + failure.prefix(60) }
        guard let addresses else { return "OTLP starting…" }
        let rate = ingest.statistics.spansPerSecond
        return "OTLP " + (addresses.http ?? addresses.grpc ?? "") + String(format: " · %.0f spans/s", rate)
    }

    /// Stops taking requests, commits those in flight, and returns once both are done.
    func stop() {
        let receiver = receiver
        Task { await receiver?.stop() }
        state.served.wait()
        ingest.drain()
    }
}
