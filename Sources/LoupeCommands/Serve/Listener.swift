import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeReceiver
import LoupeStore
import Synchronization

/// An OTLP receiver writing into a session's workspace while the process does something else:
/// the TUI's (`loupe --listen`, `:listen`), the REPL's and a notebook's (`listen`). `loupe
/// serve`'s servers and ingest; stopped, its queue committed, by `listen --stop` or when the
/// session ends.
package final class Listener: Sendable {
    private let ingest: TraceIngest
    private let serving: TraceReceiver.Serving
    /// Where it listens, once bound; set by the serving task.
    private final class Bound: Sendable {
        let addresses = Mutex<TraceReceiver.Addresses?>(nil)
    }

    private let bound = Bound()

    package init(workspace: Workspace, configuration: ReceiverConfiguration) throws(ReceiverConfiguration.Invalid) {
        let ingest = TraceIngest(workspace: workspace, byteBudget: configuration.bodyBudgetBytes)
        let receiver: TraceReceiver
        do { receiver = try TraceReceiver(configuration: configuration, ingest: ingest) } catch {
            ingest.drain()
            throw error
        }
        let bound = bound
        self.ingest = ingest
        serving = receiver.start { addresses in bound.addresses.withLock { $0 = addresses } }
    }

    /// Where it listens, once it does (at most `timeout` seconds); nil with the reason when it
    /// could not bind.
    package func addresses(timeout: Double = 10) -> Result<TraceReceiver.Addresses, CommandFailure> {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let error = serving.error {
                return .failure(CommandFailure("the OTLP receiver did not start: \(error)"))
            }
            if let addresses = bound.addresses.withLock({ $0 }) { return .success(addresses) }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return .failure(CommandFailure("the OTLP receiver did not start within \(Int(timeout)) s"))
    }

    /// "listening: OTLP/HTTP http://…/v1/traces, OTLP/gRPC … → w.sqlite", as `loupe serve` says it.
    package static func listening(_ addresses: TraceReceiver.Addresses, workspace: String, token: Bool) -> String {
        let parts = [
            addresses.http.map { "OTLP/HTTP http://\($0)/v1/traces" },
            addresses.grpc.map { "OTLP/gRPC \($0)" },
        ].compactMap { $0 }
        return "listening: \(parts.joined(separator: ", ")) → \(workspace)" + (token ? " (bearer token required)" : "")
    }

    /// "OTLP 127.0.0.1:4318 · 12 spans/s", or why it stopped, for the status bar.
    package var status: String {
        if let error = serving.error { return "OTLP off: " + "\(error)".prefix(60) }
        guard let addresses = bound.addresses.withLock({ $0 }) else { return "OTLP starting…" }
        let rate = ingest.statistics.spansPerSecond
        return "OTLP " + (addresses.http ?? addresses.grpc ?? "") + String(format: " · %.0f spans/s", rate)
    }

    package var statistics: TraceIngest.Statistics { ingest.statistics }

    /// Stops taking requests, commits those in flight, and returns once both are done.
    package func stop() {
        serving.requestStop()
        try? serving.wait()
    }

    /// "12 spans stored from 3 requests, 40 spans/s", as `loupe serve` says it.
    package static func line(_ s: TraceIngest.Statistics) -> String {
        "\(Formatting.count(s.spans, "span")) stored from \(Formatting.count(s.requests, "request"))"
            + (s.refused > 0 ? ", \(s.refused) refused while busy" : "")
            + String(format: ", %.0f spans/s", s.spansPerSecond)
            + (s.logNotFolded.map { "; " + UntrustedText.sanitized($0) } ?? "")
    }
}

/// The receiver's options, as `loupe serve` and `listen` take them.
struct ReceiverOptions: ParsableArguments {
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
    @Option(
        name: .customLong("body-timeout"),
        help: ArgumentHelp(
            "The longest an OTLP/HTTP body may take to arrive, in seconds; then 408 and the connection closed.",
            valueName: "seconds"))
    var bodyTimeout = 60.0
    @Option(
        name: .customLong("body-grace"),
        help: ArgumentHelp(
            "How long a body may arrive at any rate before --min-body-rate applies, in seconds.",
            valueName: "seconds"))
    var bodyGrace = 5.0
    @Option(
        name: .customLong("min-body-rate"),
        help: ArgumentHelp(
            "After the grace, the slowest a body may arrive on average, in bytes/s (0: any rate); slower gets 408.",
            valueName: "bytes/s"))
    var minBodyRate = 1024
    @Option(
        name: .customLong("body-budget-mb"),
        help: ArgumentHelp(
            "The most MiB of bodies and gRPC messages held at once while read and decoded, all clients together; "
                + "past it requests get 503 and are retried. At least --max-body-mb.",
            valueName: "MiB"))
    var bodyBudgetMB = 256
    @Option(
        name: .customLong("max-streams"),
        help: ArgumentHelp(
            "The most gRPC calls open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS).",
            valueName: "n"))
    var maxStreams = 100

    func configuration(environment: [String: String]) throws -> ReceiverConfiguration {
        var configuration = ReceiverConfiguration(environment: environment)
        configuration.host = host
        configuration.httpPort = noHTTP ? nil : httpPort
        configuration.grpcPort = noGRPC ? nil : grpcPort
        if let token { configuration.token = token }
        guard (1...1024).contains(maxBodyMB) else { throw CommandFailure("--max-body-mb \(maxBodyMB): use 1 to 1024") }
        configuration.maxBodyBytes = maxBodyMB << 20
        try applyBodyLimits(to: &configuration)
        // Before the workspace is opened: a busy port creates nothing.
        for (flag, port) in [("--http-port", configuration.httpPort), ("--grpc-port", configuration.grpcPort)] {
            if let port, ReceiverConfiguration.isInUse(host: host, port: port) {
                throw CommandFailure(
                    "port \(port) on \(host) is in use (another loupe serve, or a Collector?); pick another with "
                        + "\(flag) PORT (0: any free one)")
            }
        }
        return configuration
    }

    /// The body deadline, grace, minimum rate, byte budget and stream limit, each refused with
    /// its flag when it makes no sense alone or beside the others.
    private func applyBodyLimits(to configuration: inout ReceiverConfiguration) throws {
        func seconds(_ value: Double, _ flag: String, allowZero: Bool) throws -> Duration {
            guard value.isFinite, allowZero ? value >= 0 : value > 0, value <= 86_400 else {
                throw CommandFailure(
                    "\(flag) \(value): give a number of seconds, \(allowZero ? "0" : "more than 0") to 86400")
            }
            return .nanoseconds(Int64((value * 1e9).rounded()))
        }
        configuration.bodyDeadline = try seconds(bodyTimeout, "--body-timeout", allowZero: false)
        configuration.bodyGrace = try seconds(bodyGrace, "--body-grace", allowZero: true)
        guard bodyGrace < bodyTimeout else {
            throw CommandFailure(
                "--body-grace \(bodyGrace) is not shorter than --body-timeout \(bodyTimeout): the minimum rate "
                    + "would never apply")
        }
        guard minBodyRate >= 0 else { throw CommandFailure("--min-body-rate \(minBodyRate): give 0 or more bytes/s") }
        configuration.minimumBodyRate = minBodyRate
        guard (1...65_536).contains(bodyBudgetMB) else {
            throw CommandFailure("--body-budget-mb \(bodyBudgetMB): use 1 to 65536")
        }
        guard bodyBudgetMB >= maxBodyMB else {
            throw CommandFailure(
                "--body-budget-mb \(bodyBudgetMB) is less than --max-body-mb \(maxBodyMB): a body at the limit "
                    + "could never be read")
        }
        configuration.bodyBudgetBytes = bodyBudgetMB << 20
        guard (1...10_000).contains(maxStreams) else {
            throw CommandFailure("--max-streams \(maxStreams): use 1 to 10000")
        }
        configuration.maxConcurrentStreams = maxStreams
    }
}
