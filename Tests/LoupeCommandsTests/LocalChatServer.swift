import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP/1.1 server on 127.0.0.1 or a given address (an ephemeral port) that answers each POST with the next
/// recorded chat-completions reply: a JSON body, or server-sent events sent with chunked transfer
/// encoding in small network writes, as OpenAI-compatible servers stream. It keeps every request
/// (headers and body) for the test to check.
final class LocalChatServer: @unchecked Sendable {
    struct Reply {
        var status: Int
        var contentType: String
        var body: Data
        /// The pause after each 97-byte network write: long pauses make a server that trickles.
        var pauseMicroseconds: UInt32 = 200

        static func fixture(_ name: String, status: Int = 200) throws -> Reply {
            let url = TestEnvironment.repositoryRoot.appendingPathComponent(
                "Tests/LoupeAgentsTests/Fixtures/chat/\(name)")
            return Reply(
                status: status, contentType: name.hasSuffix(".sse") ? "text/event-stream" : "application/json",
                body: try Data(contentsOf: url))
        }
    }

    struct Request {
        var line: String
        var headers: [String: String]
        var body: Data
    }

    let port: UInt16
    private let socket: Int32
    private let lock = NSLock()
    private var replies: [Reply]
    private var received: [Request] = []
    private let thread: Thread

    var requests: [Request] { lock.withLock { received } }
    /// The address it listens on.
    let host: String
    var baseURL: String { "http://\(host):\(port)/v1" }

    init(replies: [Reply], host: String = "127.0.0.1") throws {
        self.host = host
        self.replies = replies
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr(host)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        socket = fd
        port = UInt16(bigEndian: address.sin_port)
        let box = Box()
        thread = Thread { box.server?.serve() }
        box.server = self
        thread.start()
    }

    private final class Box: @unchecked Sendable { weak var server: LocalChatServer? }

    func stop() {
        shutdown(socket, Int32(SHUT_RDWR))
        close(socket)
    }

    private func serve() {
        while true {
            let client = accept(socket, nil, nil)
            guard client >= 0 else { return }
            handle(client)
            close(client)
        }
    }

    private func handle(_ client: Int32) {
        var buffer = Data()
        var chunk = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let n = recv(client, &chunk, chunk.count, 0)
            guard n > 0 else { return false }
            buffer.append(contentsOf: chunk[..<n])
            return true
        }
        let separator = Data("\r\n\r\n".utf8)
        while buffer.range(of: separator) == nil { guard fill() else { return } }
        let headerEnd = buffer.range(of: separator)!
        let head = String(decoding: buffer[..<headerEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        if headers["expect"]?.lowercased() == "100-continue" { send(client, "HTTP/1.1 100 Continue\r\n\r\n") }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        var body = buffer[headerEnd.upperBound...]
        while body.count < length {
            guard fill() else { return }
            body = buffer[headerEnd.upperBound...]
        }
        let reply: Reply? = lock.withLock {
            received.append(Request(line: head.first ?? "", headers: headers, body: Data(body)))
            return replies.isEmpty ? nil : replies.removeFirst()
        }
        guard let reply else {
            return send(client, "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        }
        let reason = reply.status == 200 ? "OK" : reply.status == 429 ? "Too Many Requests" : "Error"
        send(
            client,
            "HTTP/1.1 \(reply.status) \(reason)\r\nContent-Type: \(reply.contentType)\r\n"
                + "Transfer-Encoding: chunked\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n")
        // Network writes that split lines and events anywhere, as a proxy might.
        var offset = 0
        while offset < reply.body.count {
            let end = min(reply.body.count, offset + 97)
            let piece = reply.body[offset..<end]
            send(client, String(piece.count, radix: 16) + "\r\n")
            let sent = piece.withUnsafeBytes { Glibc.send(client, $0.baseAddress, piece.count, Int32(MSG_NOSIGNAL)) }
            guard sent >= 0 else { return }  // the client has gone
            send(client, "\r\n")
            offset = end
            usleep(reply.pauseMicroseconds)
        }
        send(client, "0\r\n\r\n")
    }

    private func send(_ client: Int32, _ text: String) {
        _ = text.utf8CString.withUnsafeBufferPointer {
            Glibc.send(client, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL))
        }
    }
}
