import Foundation
import Hummingbird
import Logging
import MCP

/// `loupe mcp`'s two transports: stdio, what agent hosts launch, and streamable HTTP.
///
/// HTTP is the SDK's stateless server transport (a JSON answer to each POST, no session, no
/// server-sent stream: every tool here answers in one message) behind a Hummingbird router on
/// `/mcp`; the SDK validates the MCP headers, its Origin check guards a loopback server against DNS
/// rebinding, and `authorize` checks the bearer token before a request reaches it.
package enum MCPServing {
    /// Serves `tools` on standard input and output until the client closes its end.
    package static func stdio(tools: WorkspaceTools, version: String) async throws {
        let server = await LoupeMCPServer.make(tools: tools, version: version)
        try await server.start(transport: StdioTransport())
        await server.waitUntilCompleted()
    }

    /// The largest request body read, in bytes: tool arguments are small.
    static let maxBodyBytes = 1 << 20

    /// Serves `tools` over streamable HTTP on `host:port` (0 takes a free port) until the task is
    /// cancelled; `onListening` gets the bound port.
    ///
    /// - Parameters:
    ///   - loopback: whether `host` is this machine's loopback; then the Origin and Host headers
    ///     must name it too.
    ///   - authorize: whether a request's `Authorization` header may pass (the bearer token).
    package static func http(
        tools: WorkspaceTools, version: String, host: String, port: Int, loopback: Bool,
        authorize: @escaping @Sendable (String?) -> Bool, onListening: @escaping @Sendable (Int) -> Void
    ) async throws {
        let transport = StatelessHTTPServerTransport(
            validationPipeline: StandardValidationPipeline(validators: [
                loopback ? OriginValidator.localhost() : OriginValidator.disabled,
                AcceptHeaderValidator(mode: .jsonOnly), ContentTypeValidator(), ProtocolVersionValidator(),
            ]))
        let server = await LoupeMCPServer.make(tools: tools, version: version)
        try await server.start(transport: transport)
        defer { Task { await server.stop() } }
        // The stateless transport shares one Server among every client, and the SDK's own
        // initialize answers the first client only ("Server is already initialized"): a second
        // agent could never connect. Every initialize is answered here (the server is not strict,
        // so no other method waits on it; there is no per-client state to set).
        let capabilities = await server.capabilities
        let info = Server.Info(name: server.name, version: server.version, title: server.title)
        await server.withMethodHandler(Initialize.self) { parameters in
            Initialize.Result(
                protocolVersion: Version.supported.contains(parameters.protocolVersion)
                    ? parameters.protocolVersion : Version.latest,
                capabilities: capabilities, serverInfo: info, instructions: LoupeMCPServer.instructions)
        }
        let router = Router()
        let handler: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            try await Self.handle(request, transport: transport, authorize: authorize)
        }
        router.post("/mcp", use: handler)
        router.get("/mcp", use: handler)
        router.delete("/mcp", use: handler)
        var logger = Logger(label: "loupe.mcp")
        logger.logLevel = .critical
        let application = Application(
            router: router, server: .http1(configuration: .init(idleTimeout: .seconds(60))),
            configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) }, logger: logger)
        try await application.runService(gracefulShutdownSignals: [])
    }

    private static func handle(
        _ request: Request, transport: StatelessHTTPServerTransport, authorize: @Sendable (String?) -> Bool
    ) async throws -> Response {
        guard authorize(request.headers[.authorization]) else {
            return Response(
                status: .unauthorized, headers: [.wwwAuthenticate: "Bearer", .contentType: "application/json"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: #"{"jsonrpc":"2.0","id":null,"error":"#
                            + #"{"code":-32001,"message":"a bearer token is required"}}"#
                    )))
        }
        let body = try await request.body.collect(upTo: maxBodyBytes)
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName] = field.value }
        let answer = await transport.handleRequest(
            MCP.HTTPRequest(
                method: request.method.rawValue, headers: headers, body: Data(body.readableBytesView),
                path: request.uri.path))
        // The stateless transport answers with these headers only (no session id, no stream).
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            switch name.lowercased() {
            case "content-type": fields[.contentType] = value
            case "allow": fields[.allow] = value
            case "www-authenticate": fields[.wwwAuthenticate] = value
            default: continue
            }
        }
        let status = Hummingbird.HTTPResponse.Status(code: answer.statusCode)
        return Response(
            status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: answer.bodyData ?? Data())))
    }
}
