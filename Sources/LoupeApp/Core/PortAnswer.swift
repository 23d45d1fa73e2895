/// A port's answer to a request, or why there is none, with the request it answers.
package struct PortAnswer: Hashable, Sendable {
    private let request: AnySendableHashable
    private let load: AnySendableHashable

    package init<Request: PortRequest>(_ request: Request, _ load: Load<Request.Answer>) {
        self.request = AnySendableHashable(request)
        self.load = AnySendableHashable(load)
    }

    /// The request and its answer, when this answers a `Request`; nil for any other.
    package func matching<Request: PortRequest>(_ type: Request.Type) -> (request: Request, load: Load<Request.Answer>)?
    {
        guard let request = request.base as? Request, let load = load.base as? Load<Request.Answer> else { return nil }
        return (request, load)
    }
}
