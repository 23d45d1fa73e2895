import AsyncHTTPClient
import Foundation
import LoupeAgents
import NIOCore
import NIOHTTP1
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// AsyncHTTPClient as the providers' transport, installed by ``LoupeCLI/main(models:host:arguments:)``:
/// it waits for an answer on NIO's event loop without spinning (URLSession's libcurl loop on
/// Linux keeps a core busy meanwhile) and keeps connections to a server open between calls.
struct AsyncHTTPTransport: HTTPTransport {
    /// A client per idle timeout (a request's `timeoutInterval`), made once and kept for the
    /// process: AsyncHTTPClient's read timeout belongs to the client, not the request.
    private static let clients = Mutex<[Int64: HTTPClient]>([:])
    /// Connections kept to one server at most: `eval run` and `eval worker` take `--concurrency`
    /// up to 1,024.
    private static let maximumConnections = 1_024

    private static func client(idleSeconds: Double) -> HTTPClient {
        let milliseconds = Int64(max(1, idleSeconds) * 1000)
        return clients.withLock { clients in
            if let client = clients[milliseconds] { return client }
            var configuration = HTTPClient.Configuration(
                timeout: .init(connect: .seconds(10), read: .milliseconds(milliseconds)))
            // As many connections to one server as calls at once (`--concurrency`): AsyncHTTPClient's
            // default of 8 made the ninth call wait for a free one.
            configuration.connectionPool = .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: maximumConnections)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[milliseconds] = client
            return client
        }
    }

    func exchange(
        _ request: URLRequest, within seconds: Double?, response: @escaping @Sendable (Int) -> Void,
        data: @escaping @Sendable (Data) -> Void
    ) -> String? {
        guard let url = request.url?.absoluteString else { return "the request has no URL" }
        do {
            var outgoing = try HTTPClient.Request(url: url, method: HTTPMethod(rawValue: request.httpMethod ?? "GET"))
            for (name, value) in request.allHTTPHeaderFields ?? [:] { outgoing.headers.add(name: name, value: value) }
            if let body = request.httpBody { outgoing.body = .byteBuffer(ByteBuffer(bytes: body)) }
            let deadline = seconds.map { NIODeadline.now() + .nanoseconds(Int64(max(0, $0) * 1e9)) }
            let task = Self.client(idleSeconds: request.timeoutInterval).execute(
                request: outgoing, delegate: StreamingDelegate(response: response, data: data), deadline: deadline)
            try task.wait()
            return nil
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return HTTPTransports.outOfTime(seconds ?? 0)
        } catch {
            return "\(error)"
        }
    }
}

/// Hands the status and each piece of the body to the provider as they arrive. AsyncHTTPClient
/// calls it on one event loop, one call at a time, and holds nothing of it after the task ends.
private final class StreamingDelegate: HTTPClientResponseDelegate, Sendable {
    typealias Response = Void
    private let onResponse: @Sendable (Int) -> Void
    private let onData: @Sendable (Data) -> Void

    init(response: @escaping @Sendable (Int) -> Void, data: @escaping @Sendable (Data) -> Void) {
        onResponse = response
        onData = data
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        onResponse(Int(head.status.code))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        onData(Data(buffer.readableBytesView))
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}
}
