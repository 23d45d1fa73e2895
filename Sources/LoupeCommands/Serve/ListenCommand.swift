import ArgumentParser
import Foundation
import LoupeReceiver

/// `listen` (`:listen` in the TUI): this process becomes an OTLP endpoint for its workspace while
/// it goes on — the status bar shows the address and spans/s, and the Traces panel shows traces
/// as they arrive. `loupe serve` is the same receiver without a TUI.
struct ListenCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Receive traces over OTLP into the open workspace while Loupe runs (--stop ends it).",
        discussion: """
            Point an agent at it with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318. The receiver is \
            `loupe serve`'s: a request is answered once its spans are committed, it binds loopback unless a \
            token is given, and it stops (committing what it acknowledged) with `listen --stop` or when \
            Loupe exits.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var receiver: ReceiverOptions
    @Flag(help: "Stop receiving: what was acknowledged is committed first.") var stop = false

    func run(in context: CommandContext) throws {
        if stop {
            guard let listener = context.session.stopListening() else { throw CommandFailure("not listening") }
            return context.print("stopped: " + Listener.line(listener.statistics))
        }
        let configuration = try receiver.configuration(environment: ProcessInfo.processInfo.environment)
        let (listener, started) = try context.session.listen(configuration)
        let addresses: TraceReceiver.Addresses
        switch listener.addresses() {
        case .success(let bound): addresses = bound
        case .failure(let failure):
            context.session.stopListening()
            throw failure
        }
        let line = Listener.listening(
            addresses, workspace: context.session.displayPath, token: configuration.token != nil)
        context.print(started ? line : "already " + line)
    }
}
