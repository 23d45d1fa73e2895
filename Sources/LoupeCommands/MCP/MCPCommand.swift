import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeMCP
import LoupeReceiver
import LoupeStore
import Synchronization

/// `loupe mcp`: the workspace as a Model Context Protocol server for coding agents.
struct MCPCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve the workspace to coding agents over MCP (stdio, or streamable HTTP with --http).",
        discussion: """
            Tools: workspace_info; traces_list, trace_show, trace_search, trace_diff, trace_tokens, \
            sessions_list, session_show; evals_list, eval_show, eval_compare; retrieval_search, retrieval_evaluate; \
            review_progress, review_calibration, review_disagreements; sae_feature, sae_features_of_text; \
            profile_breakdown; roofline_kernels. \
            Each has a JSON schema and a structured result, read through the services the panels use; \
            resources loupe://trace/{id}, loupe://eval/{run}, loupe://feature/{sae}/{n}; prompts \
            triage_failed_answers and explain_regression. Results are bounded (cursors, step windows, a \
            "more" hint) and recorded text is fenced as data. Read-only unless --allow-writes, which adds \
            eval_label, trace_import and eval_run (offline and local providers only), each recorded in the \
            history with source mcp: see `loupe history`.

            Without --http it speaks on standard input and output, as agent hosts launch it: \
            {"command": "loupe", "args": ["mcp", "--workspace", "PATH"]}. With --http HOST:PORT it serves \
            POST /mcp; it binds loopback unless a token is given (--token or LOUPE_MCP_TOKEN), and with one \
            every request must carry `Authorization: Bearer TOKEN`. SIGINT or SIGTERM stops it, \
            waiting at most 5 s for the calls in flight.
            """)

    static let runsInsideTUI = false

    @OptionGroup var global: GlobalOptions
    @Option(help: "Serve streamable HTTP on this address (127.0.0.1:PORT; port 0 takes a free one).")
    var http: String?
    @Option(help: "The bearer token HTTP requests must carry (default: $LOUPE_MCP_TOKEN).") var token: String?
    @Flag(help: "Serve the tools that write (eval_label, trace_import, eval_run).") var allowWrites = false

    func run(in context: CommandContext) throws {
        let environment = ProcessInfo.processInfo.environment
        let access: WorkspaceAccess = allowWrites ? .write : .read
        var recorder: (@Sendable (String) throws -> Void)?
        if allowWrites {
            let settings = try context.settings()
            // Each write an agent makes is kept in the history as its own source (schema v27), so
            // `loupe history` shows it came through MCP and neither the TUI nor the REPL recalls it.
            recorder = { line in try settings.recordHistory(line, source: .mcp) }
        }
        let tools = WorkspaceTools(
            traces: TraceService(tables: try context.traceTables(access: access)),
            evals: try EvalCommand.service(context, access: access),
            workspaceName: context.session.displayPath, backend: context.session.isPostgres ? "postgresql" : "sqlite",
            allowsWrites: allowWrites,
            historyRecorder: recorder, database: try context.database(access: access), models: context.session.models)
        guard let http else {
            // Standard output is the protocol's channel: nothing else may be printed on it.
            return try awaitFromSync { try await MCPServing.stdio(tools: tools, version: Loupe.version) }
        }
        let (host, port) = try Self.address(http)
        let token = (self.token ?? environment["LOUPE_MCP_TOKEN"]).flatMap { $0.isEmpty ? nil : $0 }
        // The same check `loupe serve` makes: constant time, `Bearer` in any case.
        var tokenCheck = ReceiverConfiguration()
        tokenCheck.token = token
        let receiver = tokenCheck
        let loopback = ReceiverConfiguration.isLoopback(host)
        guard loopback || token != nil else {
            throw CommandFailure(
                "refusing to serve MCP on \(host) without a token: anyone who reaches it could read the workspace; "
                    + "set --token or LOUPE_MCP_TOKEN, or listen on 127.0.0.1")
        }
        let bindHost = host == "localhost" ? "127.0.0.1" : host
        let display = context.session.displayPath
        let serving = Task {
            try await MCPServing.http(
                tools: tools, version: Loupe.version, host: bindHost, port: port, loopback: loopback,
                authorize: { receiver.authorizes($0) },
                onListening: { bound in
                    context.print(
                        "serving MCP on http://\(host):\(bound)/mcp for \(display)"
                            + (token != nil ? " (bearer token required)" : ""))
                })
        }
        // A signal cancels the server, which lets the calls in flight finish. One the SDK never
        // finishes (swift-sdk 0.12.1 leaks a dropped client's pending request) would hold the
        // graceful shutdown for ever, so the command stops waiting after `shutdownGrace`.
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let settled = DispatchSemaphore(value: 0)
        Task {
            let result = await serving.result
            outcome.withLock { if $0 == nil { $0 = result } }
            settled.signal()
        }
        let stopping = Signals.onInterrupt { _ in
            serving.cancel()
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.shutdownGrace) {
                outcome.withLock { if $0 == nil { $0 = .failure(ShutdownOverdue()) } }
                settled.signal()
            }
        }
        defer { stopping.restore() }
        settled.wait()
        switch outcome.withLock({ $0 })! {
        case .success: context.print("stopped")
        case .failure(is CancellationError): context.print("stopped")
        case .failure(is ShutdownOverdue):
            context.print("stopped (a call still in flight after \(Int(Self.shutdownGrace)) s was abandoned)")
        case .failure(let error):
            throw CommandFailure("the MCP server stopped: \(UntrustedText.sanitized("\(error)"))")
        }
    }

    /// How long a stop waits for the calls in flight, in seconds.
    static let shutdownGrace = 5.0

    /// The calls in flight outlived ``shutdownGrace``.
    private struct ShutdownOverdue: Error {}

    /// `HOST:PORT`, `[::1]:PORT` or `:PORT` (loopback).
    static func address(_ text: String) throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw CommandFailure("--http \(UntrustedText.sanitized(text)): give HOST:PORT, as 127.0.0.1:8765")
        }
        let host = String(text[..<colon])
        return (host.isEmpty ? "127.0.0.1" : host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port)
    }
}
