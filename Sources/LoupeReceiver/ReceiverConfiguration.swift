import Foundation
import LoupeBase

#if canImport(Glibc)
    import Glibc
#endif

/// Where the OTLP receiver listens and what it accepts.
package struct ReceiverConfiguration: Hashable, Sendable {
    /// The address both servers bind; loopback unless a token is set.
    package var host = "127.0.0.1"
    /// OTLP/HTTP's port (4318 is OTLP's); nil turns it off, 0 takes a free one.
    package var httpPort: Int? = 4318
    /// OTLP/gRPC's port (4317 is OTLP's); nil turns it off, 0 takes a free one.
    package var grpcPort: Int? = 4317
    /// The bearer token every request must carry (`Authorization: Bearer …`); required to bind
    /// anything but loopback. Never printed or stored.
    package var token: String?
    /// The largest request body, before and after inflating gzip.
    package var maxBodyBytes = 32 << 20
    /// How long an OTLP/HTTP body may take to arrive, whatever its rate.
    package var bodyDeadline: Duration = .seconds(60)
    /// How long a body may arrive at any rate before it must keep up ``minimumBodyRate``.
    package var bodyGrace: Duration = .seconds(5)
    /// The slowest a body may arrive once ``bodyGrace`` is over, in bytes a second on average
    /// since its request began; a slower one is answered 408 and its connection closed.
    package var minimumBodyRate = 1024
    /// The most bytes of bodies and gRPC messages held at once while they are read and decoded,
    /// whatever the number of connections: the byte budget of the ``TraceIngest`` the receiver
    /// hands its requests to (``TraceIngest/byteBudget``; its creator gives it this). At least
    /// ``maxBodyBytes``, so that a body at the limit can be read.
    package var bodyBudgetBytes = 256 << 20
    /// The most gRPC streams (calls) open at once on one connection, advertised in HTTP/2's
    /// SETTINGS_MAX_CONCURRENT_STREAMS: a client opening more is refused (a well-behaved one
    /// waits), so that one connection cannot hold a handler for every stream it opens.
    package var maxConcurrentStreams = 100

    package init() {}

    /// The defaults, with the token `LOUPE_OTLP_TOKEN` gives (an empty one is none).
    package init(environment: [String: String]) {
        token = environment["LOUPE_OTLP_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
    }

    package struct Invalid: UserFacingError, Hashable, Sendable {
        package var description: String
    }

    /// Whether `host` names this machine's loopback only.
    package static func isLoopback(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if bare == "localhost" || bare == "::1" { return true }
        let parts = bare.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Refuses what would expose the receiver or make no sense: a non-loopback address without a
    /// token, both protocols off, a port out of range, an empty token.
    package func validated() throws(Invalid) -> Self {
        if let token, token.trimmingCharacters(in: .whitespaces).isEmpty {
            throw Invalid(description: "the OTLP token is empty; give one, or leave it out on loopback")
        }
        if !Self.isLoopback(host) && token == nil {
            throw Invalid(
                description:
                    "refusing to listen on \(host) without a token: anyone who reaches it could write to the workspace; set --token or LOUPE_OTLP_TOKEN, or listen on 127.0.0.1"
            )
        }
        if httpPort == nil && grpcPort == nil { throw Invalid(description: "both OTLP/HTTP and OTLP/gRPC are off") }
        for (name, port) in [("HTTP", httpPort), ("gRPC", grpcPort)] {
            if let port, !(0...65535).contains(port) {
                throw Invalid(description: "the \(name) port \(port) is not between 0 and 65535")
            }
        }
        if maxBodyBytes < 1024 { throw Invalid(description: "the body limit \(maxBodyBytes) bytes is too small") }
        if bodyDeadline <= .zero || bodyGrace < .zero || minimumBodyRate < 0 {
            throw Invalid(description: "the body deadline must be positive, the grace and minimum rate not negative")
        }
        if bodyGrace >= bodyDeadline {
            throw Invalid(
                description:
                    "the grace before the minimum body rate applies (\(bodyGrace)) must be shorter than the body "
                    + "deadline (\(bodyDeadline))")
        }
        if bodyBudgetBytes < maxBodyBytes {
            throw Invalid(
                description:
                    "the byte budget for bodies being read (\(bodyBudgetBytes) bytes) is smaller than the body limit "
                    + "(\(maxBodyBytes) bytes): a body at the limit could never be read")
        }
        if maxConcurrentStreams < 1 {
            throw Invalid(description: "the gRPC stream limit \(maxConcurrentStreams) must be at least 1")
        }
        return self
    }

    /// Whether `header` (an `Authorization` value) carries the token; compares in constant time.
    package func authorizes(_ header: String?) -> Bool {
        guard let token else { return true }
        guard let header, header.lowercased().hasPrefix("bearer ") else { return false }
        let given = Array(header.utf8.dropFirst(7))
        let expected = Array(token.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for i in 0..<expected.count { difference |= expected[i] ^ (i < given.count ? given[i] : 0) }
        return difference == 0
    }

    /// Whether another process already listens on `host:port` (TCP): a bind there fails with
    /// EADDRINUSE. Asked before a server opens its workspace, so a busy port is a one-line answer
    /// that names the port and creates nothing. SO_REUSEADDR as the servers set it, so a port
    /// whose last connections are closing is not taken for busy. A race with a process that
    /// binds in between still ends in the server's own bind error.
    package static func isInUse(host: String, port: Int) -> Bool {
        guard (1...65535).contains(port) else { return false }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(bare, String(port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(first) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            if fd >= 0 {
                var one: Int32 = 1
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
                let failed = bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 && errno == EADDRINUSE
                close(fd)
                if failed { return true }
            }
            entry = info.pointee.ai_next
        }
        return false
    }
}
