import Dispatch
import Foundation
import Hummingbird
import Logging
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeReceiver
import ServiceLifecycle
import Synchronization

/// `loupe serve`'s OpenAI-compatible endpoint: the routes of ``OpenAIHTTP`` on their own port,
/// beside the OTLP receiver and sharing its address, token, body limit and ingest.
package final class OpenAIServer: Sendable {
    /// Why the endpoint did not start.
    package struct StartFailure: Error, CustomStringConvertible, Sendable {
        package var description: String
        init(_ description: String) { self.description = description }
    }

    private let setup: OpenAIHTTP.Setup
    private let port: Int
    /// What the serving task shares with the caller.
    private final class Shared: Sendable {
        let group = Mutex<ServiceGroup?>(nil)
        let bound = Mutex<String?>(nil)
        let failure = Mutex<String?>(nil)
        let finished = DispatchSemaphore(value: 0)
    }

    private let shared = Shared()

    /// - Parameters:
    ///   - configuration: the receiver's (host, token, body limit), already validated.
    ///   - port: the endpoint's own port (0: any free one).
    ///   - ingest: where each request's trace goes; nil records none.
    ///   - traceAttributes: attributes every request's trace carries (a steered model says so).
    package init(
        configuration: ReceiverConfiguration, port: Int, scheduler: any CompletionScheduler, ingest: TraceIngest?,
        traceAttributes: JSONObject = [:]
    ) {
        setup = OpenAIHTTP.Setup(
            configuration: configuration, scheduler: scheduler,
            recorder: ingest.map { CompletionTrace.Recorder(ingest: $0, attributes: traceAttributes) },
            tokens: TokenTable(scheduler.generator.tokenizer), metrics: ServingMetrics(scheduler: scheduler))
        self.port = port
    }

    /// Starts serving on a task of its own; returns the bound `host:port` once it listens, or throws
    /// why it could not (a port in use).
    package func start(timeoutSeconds: Double = 30) throws -> String {
        var logger = Logger(label: "loupe.openai")
        logger.logLevel = .critical
        let host = setup.configuration.host == "localhost" ? "127.0.0.1" : setup.configuration.host
        let shared = shared
        let application = Application(
            router: OpenAIHTTP.router(setup),
            server: .http1(configuration: .init(idleTimeout: .seconds(60))),
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                shared.bound.withLock { $0 = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
            }, logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [application], gracefulShutdownSignals: [], logger: logger))
        shared.group.withLock { $0 = group }
        Task {
            do { try await group.run() } catch { shared.failure.withLock { $0 = "\(error)" } }
            shared.finished.signal()
        }
        let deadline = Date().addingTimeInterval(timeoutSeconds)
        while Date() < deadline {
            if let address = shared.bound.withLock({ $0 }) { return address }
            if let why = shared.failure.withLock({ $0 }) {
                throw OpenAIServer.StartFailure("the OpenAI endpoint did not start: \(why)")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw OpenAIServer.StartFailure("the OpenAI endpoint did not start within \(timeoutSeconds) s")
    }

    /// "3 completion traces were not recorded: WHY" once a trace could not be stored, else nil;
    /// `loupe serve` prints it as it stops.
    package var tracesNotRecorded: String? { setup.recorder?.notRecorded.line }

    /// Stops taking requests, refuses what is queued and waits for the answers in flight.
    package func stop() {
        setup.scheduler.shutdown()
        guard let group = shared.group.withLock({ $0 }) else { return }
        Task { await group.triggerGracefulShutdown() }
        shared.finished.wait()
        shared.finished.signal()
    }
}
