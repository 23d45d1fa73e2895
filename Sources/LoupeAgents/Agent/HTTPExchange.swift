import Foundation
import LoupeBase
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One HTTP exchange through URLSession, delivering the body as it arrives; blocks until done.
///
/// Thread-safety: `failure` is written only on the session's serial delegate queue, before
/// `done` is signalled, and read by `run()` only after `done.wait()` returns: the semaphore
/// orders the two, which is why the unchecked conformance holds. The rest is immutable.
final class HTTPExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let request: URLRequest
    private let onData: (Data) -> Void
    private let onResponse: (Int) -> Void
    private let done = DispatchSemaphore(value: 0)
    private var failure: String?

    init(request: URLRequest, data: @escaping (Data) -> Void, response: @escaping (Int) -> Void) {
        self.request = request
        self.onData = data
        self.onResponse = response
    }

    /// Runs the exchange; the transport error, or nil when a response (of any status) arrived.
    ///
    /// - Parameter seconds: the most the whole exchange may take; URLSession's own timeout only
    ///   bounds the wait between two bytes, which a trickling server never reaches.
    func run(within seconds: Double? = nil) -> String? {
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(configuration: .ephemeral, delegate: self, delegateQueue: queue)
        let task = session.dataTask(with: request)
        task.resume()
        defer { session.finishTasksAndInvalidate() }
        guard let seconds else {
            done.wait()
            return failure
        }
        if done.wait(timeout: .now() + max(0, seconds)) == .timedOut {
            task.cancel()
            done.wait()
            return HTTPTransports.outOfTime(seconds)
        }
        return failure
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        onResponse((response as? HTTPURLResponse)?.statusCode ?? 0)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) { onData(data) }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        if let error { failure = error.localizedDescription }
        done.signal()
    }
}
