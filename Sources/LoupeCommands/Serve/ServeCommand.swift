import ArgumentParser
import Dispatch
import Foundation
import LoupeBase
import LoupeKit
import LoupeReceiver
import LoupeStore
import LoupeTUI
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// `loupe serve`: Loupe as an OTLP endpoint, headless, for a box that collects a team's traces.
struct ServeCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Receive traces over OTLP (HTTP on 4318, gRPC on 4317) into the workspace.",
        discussion: """
            Point an agent at it with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 and \
            OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf (or grpc with port 4317). A request is answered \
            only once its spans are committed; a trace grows as its spans arrive, in any order and over \
            many requests, and a batch sent twice changes nothing. When the queue is full it answers 503 \
            (gRPC UNAVAILABLE) so exporters back off. It binds loopback unless a token is given; with a \
            token every request must carry `Authorization: Bearer TOKEN`. SIGINT or SIGTERM stops taking \
            requests, commits those in flight and exits.
            """)

    static let runsInsideTUI = false

    @OptionGroup var global: GlobalOptions
    @Option(help: "The address to listen on; anything but loopback needs a token.") var host = "127.0.0.1"
    @Option(name: .customLong("http-port"), help: "OTLP/HTTP's port (0: any free one).") var httpPort = 4318
    @Option(name: .customLong("grpc-port"), help: "OTLP/gRPC's port (0: any free one).") var grpcPort = 4317
    @Flag(name: .customLong("no-http"), help: "Do not serve OTLP/HTTP.") var noHTTP = false
    @Flag(name: .customLong("no-grpc"), help: "Do not serve OTLP/gRPC.") var noGRPC = false
    @Option(
        help: ArgumentHelp(
            "Require this bearer token (default: $LOUPE_OTLP_TOKEN). Prefer the variable: an argument shows in ps.",
            valueName: "token")) var token: String?
    @Option(name: .customLong("max-body-mb"), help: "The largest request body, in MiB, before and after gzip.")
    var maxBodyMB = 32
    @Option(help: "The most spans waiting to be stored; past it requests get 503 and are retried.")
    var queue = 16_384

    func run(in context: CommandContext) throws {
        var configuration = ReceiverConfiguration()
        configuration.host = host
        configuration.httpPort = noHTTP ? nil : httpPort
        configuration.grpcPort = noGRPC ? nil : grpcPort
        configuration.token =
            token
            ?? ProcessInfo.processInfo.environment["LOUPE_OTLP_TOKEN"].flatMap {
                $0.isEmpty ? nil : $0
            }
        guard (1...1024).contains(maxBodyMB) else { throw CommandFailure("--max-body-mb \(maxBodyMB): use 1 to 1024") }
        configuration.maxBodyBytes = maxBodyMB << 20
        guard queue >= 1 else { throw CommandFailure("--queue \(queue): give at least 1") }
        let workspace = try context.workspace()
        let ingest = TraceIngest(workspace: workspace, capacity: queue)
        let receiver: TraceReceiver
        do {
            receiver = try TraceReceiver(configuration: configuration, ingest: ingest)
        } catch {
            ingest.drain()
            throw CommandFailure(error.description)
        }
        let needsToken = configuration.token != nil
        let serving = receiver.start { addresses in
            let listening = [
                addresses.http.map { "OTLP/HTTP http://\($0)/v1/traces" },
                addresses.grpc.map { "OTLP/gRPC \($0)" },
            ].compactMap { $0 }
            context.print(
                "listening: \(listening.joined(separator: ", ")) → \(workspace.path)"
                    + (needsToken ? " (bearer token required)" : ""))
        }
        // The first signal stops taking requests and commits those in flight; a second leaves at
        // once (everything acknowledged is already committed).
        let signals = Atomic<Int>(0)
        let stopping = Signals.onInterrupt {
            if signals.wrappingAdd(1, ordering: .relaxed).oldValue == 0 {
                serving.requestStop()
            } else {
                FileHandle.standardError.write(Data("loupe serve: stopping at once\n".utf8))
                _exit(130)
            }
        }
        defer { stopping.restore() }
        let done = Atomic<Bool>(false)
        let progressStopped = DispatchSemaphore(value: 0)
        let progress = Thread {
            var last = ingest.statistics
            var ticks = 0
            while !done.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.1)
                ticks += 1
                guard ticks % 50 == 0 else { continue }
                let now = ingest.statistics
                if now.requests != last.requests || now.refused != last.refused {
                    context.print(Self.line(now))
                }
                last = now
            }
            progressStopped.signal()
        }
        progress.start()
        defer {
            done.store(true, ordering: .relaxed)
            progressStopped.wait()
        }
        do {
            try serving.wait()
        } catch {
            throw CommandFailure("the OTLP receiver stopped: \(UntrustedText.sanitized("\(error)"))")
        }
        context.print("stopped: " + Self.line(ingest.statistics))
    }

    private static func line(_ s: TraceIngest.Statistics) -> String {
        "\(Formatting.count(s.spans, "span")) stored from \(Formatting.count(s.requests, "request"))"
            + (s.refused > 0 ? ", \(s.refused) refused while busy" : "")
            + String(format: ", %.0f spans/s", s.spansPerSecond)
    }
}

/// SIGINT and SIGTERM delivered to a closure (on a dispatch queue) instead of ending the process,
/// until ``restore()``.
enum Signals {
    struct Handle {
        fileprivate var sources: [any DispatchSourceSignal]

        func restore() {
            for source in sources { source.cancel() }
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }

    static func onInterrupt(_ body: @escaping @Sendable () -> Void) -> Handle {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: body)
            source.resume()
            sources.append(source)
        }
        Interrupt.unblockTerminationSignals()
        return Handle(sources: sources)
    }
}
