import LoupeKit

/// A ``PortRequest`` with its types erased, so that one ``Effect`` case carries every panel's
/// reads and the runtime has no per-feature code.
package struct PortCall: Hashable, Sendable {
    private let request: AnySendableHashable
    private let answering: @Sendable (Ports, JobReporter?) -> PortAnswer
    /// The request's ``PortRequest/jobTitle``: set when it runs as a job.
    package let jobTitle: String?

    package init<Request: PortRequest>(_ request: Request) {
        self.request = AnySendableHashable(request)
        jobTitle = request.jobTitle
        answering = { ports, reporter in
            guard let port = ports[Request.Port.self] else {
                return PortAnswer(
                    request, .failed(ports.whyMissing ?? "nothing to ask: \(Request.Port.self) is not available here"))
            }
            return PortAnswer(
                request, .from { try reporter.map { try request.ask(port, reporter: $0) } ?? request.ask(port) })
        }
    }

    /// Asks the request of its port in `ports`; blocks for as long as the port takes.
    package func answer(using ports: Ports) -> PortAnswer { answering(ports, nil) }

    /// Asks the request as a job: progress and cancellation through `reporter`.
    package func answer(using ports: Ports, reporter: JobReporter) -> PortAnswer { answering(ports, reporter) }

    /// The request, when it is a `Request` (tests and the benches look inside effects).
    package func request<Request: PortRequest>(as type: Request.Type) -> Request? { request.base as? Request }

    package static func == (left: PortCall, right: PortCall) -> Bool { left.request == right.request }

    package func hash(into hasher: inout Hasher) { hasher.combine(request) }
}
