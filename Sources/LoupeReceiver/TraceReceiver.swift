import Dispatch
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2
import Hummingbird
import Logging
import LoupeKit
import ServiceLifecycle
import Synchronization

/// Loupe as an OTLP endpoint: OTLP/HTTP and OTLP/gRPC on one address, both handing what they
/// receive to one ``TraceIngest``. ``run(onListening:)`` serves until ``stop()``, which stops
/// taking new requests and lets those in flight finish (their spans committed and answered).
package final class TraceReceiver: Sendable {
    /// Where the servers listen once bound ("127.0.0.1:4318").
    package struct Addresses: Hashable, Sendable {
        package var http: String?
        package var grpc: String?
    }

    package let configuration: ReceiverConfiguration
    package let ingest: TraceIngest

    private struct Stopping {
        var requested = false
        var action: (@Sendable () async -> Void)?
    }

    private let stopping = Mutex(Stopping())

    package init(configuration: ReceiverConfiguration, ingest: TraceIngest) throws(ReceiverConfiguration.Invalid) {
        self.configuration = try configuration.validated()
        self.ingest = ingest
    }

    /// Serves until ``stop()`` (or until a server fails: a port in use, say, which throws).
    /// `onListening` is told the bound addresses once both servers listen.
    package func run(onListening: @escaping @Sendable (Addresses) -> Void = { _ in }) async throws {
        var logger = Logger(label: "loupe.otlp")
        logger.logLevel = .critical
        let bracketed = configuration.host.hasPrefix("[") && configuration.host.hasSuffix("]")
        let bare = bracketed ? String(configuration.host.dropFirst().dropLast()) : configuration.host
        let host = bare == "localhost" ? "127.0.0.1" : bare
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let http = configuration.httpPort.map { port in
            ServiceGroup(
                configuration: .init(
                    services: [
                        Application(
                            router: OTLPHTTP.router(configuration: configuration, ingest: ingest),
                            // A connection idle for 30 s (an upload that stalled) is closed.
                            server: .http1(configuration: .init(idleTimeout: .seconds(30))),
                            configuration: .init(address: .hostname(host, port: port)),
                            onServerRunning: { channel in
                                bound.yield(channel.localAddress?.port ?? port)
                                bound.finish()
                            }, logger: logger)
                    ], gracefulShutdownSignals: [], logger: logger))
        }
        let grpc = configuration.grpcPort.map { port in
            var config = HTTP2ServerTransport.Posix.Config.defaults
            config.rpc.maxRequestPayloadSize = configuration.maxBodyBytes
            // NIOHTTP2 enforces it once the client acknowledges the setting: a stream past it
            // is a protocol error that closes that client's connection, not the server's problem.
            config.http2.maxConcurrentStreams = configuration.maxConcurrentStreams
            config.compression.enabledAlgorithms = .all
            let address: GRPCNIOTransportCore.SocketAddress =
                host.contains(":") ? .ipv6(host: host, port: port) : .ipv4(host: host, port: port)
            return GRPCServer(
                transport: .http2NIOPosix(address: address, transportSecurity: .plaintext, config: config),
                services: [OTLPGRPC(configuration: configuration, ingest: ingest)])
        }
        let stop: @Sendable () async -> Void = {
            await http?.triggerGracefulShutdown()
            grpc?.beginGracefulShutdown()
        }
        let stopNow = stopping.withLock { state -> Bool in
            state.action = stop
            return state.requested
        }
        if stopNow { return }
        // The addresses are told from a task of their own: a gRPC server stopped before it listened
        // never completes its address, and the servers' group must not wait for it.
        let told = Task {
            var addresses = Addresses()
            if http != nil {
                for await port in ports {
                    addresses.http = Self.address(host, port)
                    break
                }
            }
            // A gRPC server that failed to listen throws here; the group below reports its error.
            if let grpc, let bound = try? await grpc.listeningAddress {
                if let port = bound.ipv4?.port ?? bound.ipv6?.port { addresses.grpc = Self.address(host, port) }
            }
            if !Task.isCancelled { onListening(addresses) }
        }
        defer { told.cancel() }
        do {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                if let http { tasks.addTask { try await http.run() } }
                if let grpc { tasks.addTask { try await grpc.serve() } }
                do {
                    while try await tasks.next() != nil {}
                } catch {
                    // One server failed (a port in use): stop the other, then say why.
                    await stop()
                    throw error
                }
            }
        } catch {
            // Stopped while starting: a server told to stop before it served says so by throwing.
            if stopping.withLock({ $0.requested }) { return }
            throw error
        }
    }

    /// Stops taking requests; those in flight are committed and answered before ``run`` returns.
    package func stop() async {
        let action = stopping.withLock { state -> (@Sendable () async -> Void)? in
            state.requested = true
            return state.action
        }
        await action?()
    }

    private static func address(_ host: String, _ port: Int) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

extension TraceReceiver {
    /// The receiver serving on a task of its own, for a caller that is not async (`loupe serve`,
    /// the TUI's listener).
    package final class Serving: Sendable {
        /// What the serving task leaves: why it stopped, when that was a failure.
        private final class Outcome: Sendable {
            let failure = Mutex<(any Error)?>(nil)
            let finished = DispatchSemaphore(value: 0)
        }

        private let receiver: TraceReceiver
        private let outcome = Outcome()

        fileprivate init(_ receiver: TraceReceiver, onListening: @escaping @Sendable (Addresses) -> Void) {
            self.receiver = receiver
            let outcome = outcome
            Task {
                do { try await receiver.run(onListening: onListening) } catch {
                    outcome.failure.withLock { $0 = error }
                }
                outcome.finished.signal()
            }
        }

        /// Why it stopped serving, once it has, when that was a failure (a port in use).
        package var error: (any Error)? { outcome.failure.withLock { $0 } }

        /// Asks it to stop taking requests; those in flight are committed and answered.
        package func requestStop() {
            let receiver = receiver
            Task { await receiver.stop() }
        }

        /// Waits until it stopped serving, then commits what its queue holds; throws why it stopped
        /// when that was a failure.
        package func wait() throws {
            outcome.finished.wait()
            outcome.finished.signal()
            receiver.ingest.drain()
            if let error { throw error }
        }
    }

    /// Starts serving on a task of its own; `onListening` is told the bound addresses.
    package func start(onListening: @escaping @Sendable (Addresses) -> Void = { _ in }) -> Serving {
        Serving(self, onListening: onListening)
    }
}
