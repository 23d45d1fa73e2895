import Foundation
import LoupeBase
import LoupeOTLP
import SwiftProtobuf

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends export requests to another OTLP/HTTP endpoint (a collector, Phoenix, Langfuse, another
/// `loupe serve`) as the SDKs' exporters do: protobuf bodies, gzip, the endpoint's
/// `/v1/traces`, headers from `OTEL_EXPORTER_OTLP_HEADERS`; 429/502/503/504 are retried after
/// their `Retry-After` (or 1, 2, 4… s) a bounded number of times, and a partial success is told.
/// Header values are secrets (API keys): no message here ever holds one. What the endpoint says
/// is untrusted text: the caller sanitizes it before a terminal sees it.
package struct OTLPExporter: Sendable {
    package var endpoint: URL
    package var headers: [(name: String, value: String)]
    package var timeout: Double = 30
    package var attempts = 5

    /// What the endpoint took.
    package struct Sent: Sendable, Equatable {
        package var rejectedSpans: Int64
        package var message: String
    }

    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// `url` as OTEL_EXPORTER_OTLP_ENDPOINT is read: a base (no path) gets `/v1/traces`; a URL
    /// with a path is used as it is (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT).
    package init(url: String, headers: [(name: String, value: String)]) throws(Failure) {
        guard var parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(),
            scheme == "http" || scheme == "https", parts.host?.isEmpty == false
        else {
            throw Failure(description: "\(url) is not an http:// or https:// URL with a host")
        }
        guard parts.user == nil, parts.password == nil else {
            throw Failure(description: "put credentials in a header (--header), not in the URL")
        }
        if parts.path.isEmpty || parts.path == "/" { parts.path = "/v1/traces" }
        guard let endpoint = parts.url else { throw Failure(description: "\(url) is not a URL") }
        self.endpoint = endpoint
        self.headers = headers
    }

    /// `OTEL_EXPORTER_OTLP_HEADERS`' form: `key=value` pairs separated by commas, values
    /// percent-encoded (W3C baggage's octets).
    package static func headers(fromEnvironment text: String) throws(Failure) -> [(name: String, value: String)] {
        var out: [(name: String, value: String)] = []
        for (n, pair) in text.split(separator: ",").enumerated() {
            let trimmed = pair.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            do { out.append(try header(trimmed)) } catch {
                throw Failure(description: "OTEL_EXPORTER_OTLP_HEADERS, pair \(n + 1): \(error.description)")
            }
        }
        return out
    }

    /// One `name=value` (or `name: value`) header. Nothing of it is echoed in an error: a
    /// mistyped header may be all secret.
    package static func header(_ text: String) throws(Failure) -> (name: String, value: String) {
        guard let split = text.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
            throw Failure(description: "a header is Name=value, and this one has no = (its text is not shown)")
        }
        let name = text[..<split].trimmingCharacters(in: .whitespaces)
        let raw = text[text.index(after: split)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != 58 }) else {
            throw Failure(description: "a header's name before = is empty or holds spaces (its text is not shown)")
        }
        let value = raw.removingPercentEncoding ?? raw
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw Failure(description: "the value of header \(name) holds a line break")
        }
        return (name, value)
    }

    /// Sends one request, retrying what the endpoint asks to be retried.
    package func send(_ request: Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest) async throws(Failure)
        -> Sent
    {
        let body: Data
        do { body = try Gzip.compress(try request.serializedData()) } catch {
            throw Failure(description: "the request could not be encoded: \(error)")
        }
        var urlRequest = URLRequest(url: endpoint)
        urlRequest.httpMethod = "POST"
        urlRequest.timeoutInterval = timeout
        urlRequest.setValue("application/x-protobuf", forHTTPHeaderField: "Content-Type")
        urlRequest.setValue("gzip", forHTTPHeaderField: "Content-Encoding")
        for header in headers { urlRequest.setValue(header.value, forHTTPHeaderField: header.name) }
        urlRequest.httpBody = body
        let target = "\(endpoint.host ?? "")\(endpoint.port.map { ":\($0)" } ?? "")\(endpoint.path)"
        var attempt = 1
        while true {
            let data: Data
            let response: HTTPURLResponse
            do {
                let (d, r) = try await Self.session.data(for: urlRequest)
                guard let http = r as? HTTPURLResponse else { throw Failure(description: "no HTTP answer") }
                (data, response) = (d, http)
            } catch let error as Failure {
                throw error
            } catch {
                let (why, transient) = Self.transport(error)
                // A dropped connection or a silent endpoint is retried like a 503; nothing
                // listening is said at once (a wrong port should not take fifteen seconds).
                guard transient, attempt < attempts else {
                    throw Failure(description: "\(target): \(why)\(transient ? " (\(attempt) attempts)" : "")")
                }
                try? await Task.sleep(for: .seconds(Double(1 << (attempt - 1))))
                attempt += 1
                continue
            }
            let status = response.statusCode
            if status == 200 || status == 202 { return Self.sent(data, response) }
            if (300..<400).contains(status) {
                let location = response.value(forHTTPHeaderField: "Location").flatMap { URL(string: $0)?.host } ?? "?"
                throw Failure(
                    description: "\(target) answered \(status), a redirect to \(location): give that endpoint to --to "
                        + "(redirects are not followed, so headers go nowhere else)")
            }
            let retryable = [429, 502, 503, 504].contains(status)
            guard retryable, attempt < attempts else {
                let why = Self.reason(data, response)
                let after = retryable ? " after \(attempt) attempts" : ""
                throw Failure(description: "\(target) answered \(status)\(after)\(why.isEmpty ? "" : ": \(why)")")
            }
            // Retry-After in whole seconds (an HTTP date or anything else: the back-off).
            let wait =
                response.value(forHTTPHeaderField: "Retry-After").flatMap {
                    UInt($0.trimmingCharacters(in: .whitespaces))
                }
                .map { Double(min($0, 30)) } ?? Double(1 << (attempt - 1))
            try? await Task.sleep(for: .seconds(wait))
            attempt += 1
        }
    }

    /// A transport failure in plain words (Foundation says "NSURLErrorDomain -1004"), and whether
    /// trying again may help.
    static func transport(_ error: any Error) -> (why: String, transient: Bool) {
        guard let error = error as? URLError else { return (error.localizedDescription, false) }
        switch error.code {
        case .cannotConnectToHost:
            return ("nothing is listening there (connection refused): is the receiver running?", false)
        case .cannotFindHost, .dnsLookupFailed: return ("the host name does not resolve", false)
        case .timedOut: return ("no answer in time", true)
        case .networkConnectionLost: return ("the connection closed before the answer", true)
        case .notConnectedToInternet: return ("no network", false)
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return ("the TLS connection failed (\(error.code.rawValue))", false)
        default: return ("the request failed (URLError \(error.code.rawValue))", false)
        }
    }

    /// A session that follows no redirect: a 3xx would carry the headers (keys) to another host
    /// and turn the POST into a GET.
    private static let session = URLSession(
        configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)

    private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        // Stateless: nothing to guard.
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    private static func isProtobuf(_ response: HTTPURLResponse) -> Bool {
        response.value(forHTTPHeaderField: "Content-Type")?.lowercased().contains("protobuf") == true
    }

    /// A success's partial rejections. A body that is neither OTLP message (many receivers
    /// answer 200 with nothing, or with text) rejected nothing: the spans were accepted.
    private static func sent(_ data: Data, _ response: HTTPURLResponse) -> Sent {
        var out = Sent(rejectedSpans: 0, message: "")
        if isProtobuf(response),
            let answer = try? Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceResponse(serializedBytes: data)
        {
            out.rejectedSpans = answer.partialSuccess.rejectedSpans
            out.message = answer.partialSuccess.errorMessage
        } else if let answer = try? JSONValue.parse(data), let partial = answer["partialSuccess"] {
            out.rejectedSpans = partial["rejectedSpans"]?.string.flatMap { Int64($0) } ?? 0
            out.message = partial["errorMessage"]?.string ?? ""
        }
        return out
    }

    /// A failed answer's reason: a `google.rpc.Status` message, or the start of a text body
    /// (each decode a probe of what the receiver sent, never a failure of ours).
    private static func reason(_ data: Data, _ response: HTTPURLResponse) -> String {
        let text: String
        if isProtobuf(response), let status = try? Google_Rpc_Status(serializedBytes: data) {
            text = status.message
        } else if let json = try? JSONValue.parse(data), let message = json["message"]?.string ?? json["detail"]?.string
        {
            text = message
        } else {
            text = String(decoding: data.prefix(200), as: UTF8.self)
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
