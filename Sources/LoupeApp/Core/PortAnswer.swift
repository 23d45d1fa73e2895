/// A port's answer to a request, or why there is none, with the request it answers.
package struct PortAnswer: Hashable, Sendable {
    private let request: any Sendable
    private let load: any Sendable
    private let matches: @Sendable (PortAnswer) -> Bool
    private let hashing: @Sendable (inout Hasher) -> Void

    package init<Request: PortRequest>(_ request: Request, _ load: Load<Request.Answer>) {
        self.request = request
        self.load = load
        matches = { other in (other.request as? Request) == request && (other.load as? Load<Request.Answer>) == load }
        hashing = { hasher in
            hasher.combine(request)
            hasher.combine(load)
        }
    }

    /// The request and its answer, when this answers a `Request`; nil for any other.
    package func matching<Request: PortRequest>(_ type: Request.Type) -> (request: Request, load: Load<Request.Answer>)?
    {
        guard let request = request as? Request, let load = load as? Load<Request.Answer> else { return nil }
        return (request, load)
    }

    package static func == (left: PortAnswer, right: PortAnswer) -> Bool { left.matches(right) }

    package func hash(into hasher: inout Hasher) { hashing(&hasher) }
}
