import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How an OpenAI-compatible provider sends its request and reads the answer as it arrives.
///
/// The engine's own is URLSession (``HTTPExchange``); the executable installs AsyncHTTPClient's
/// with ``HTTPTransports/install(_:)``. On Linux, URLSession's libcurl loop keeps a core busy for
/// as long as a call waits: a 200 ms model answer cost 0.13 CPU-seconds, which held an eval
/// worker at 9 answers a second whatever its concurrency.
package protocol HTTPTransport: Sendable {
    /// Sends `request`, reports the response's status, then its body's bytes as they arrive.
    /// Returns the transport's error in words, or nil once a whole response (of any status) came.
    ///
    /// - Parameter seconds: the most the whole exchange may take; `request`'s timeout bounds the
    ///   wait between two bytes.
    func exchange(
        _ request: URLRequest, within seconds: Double?, response: @escaping @Sendable (Int) -> Void,
        data: @escaping @Sendable (Data) -> Void
    ) -> String?
}

/// The transport providers use: URLSession until the executable installs another.
package enum HTTPTransports {
    private static let installed = Mutex<any HTTPTransport>(URLSessionTransport())

    package static var current: any HTTPTransport { installed.withLock { $0 } }

    /// Makes `transport` the one every provider made from now on uses.
    package static func install(_ transport: any HTTPTransport) { installed.withLock { $0 = transport } }

    /// What a call that ran out of its time limit says, whichever transport made it.
    package static func outOfTime(_ seconds: Double) -> String {
        "no complete response within \(Calculator.format(seconds)) s (the rest of the time limit)"
    }
}

/// URLSession, one session an exchange.
struct URLSessionTransport: HTTPTransport {
    func exchange(
        _ request: URLRequest, within seconds: Double?, response: @escaping @Sendable (Int) -> Void,
        data: @escaping @Sendable (Data) -> Void
    ) -> String? {
        HTTPExchange(request: request, data: data, response: response).run(within: seconds)
    }
}
