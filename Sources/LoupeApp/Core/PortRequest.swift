import LoupeKit

/// A question a panel asks its port in LoupeKit (``TracesBrowser``, ``EvalsBrowser`` …).
///
/// A panel returns one as an effect (`.ask(request)`); the runtime asks it on a background
/// thread with the port the composition root registered in ``Ports`` and hands the answer back
/// to the panels as ``Msg/answered(_:)``, a failure as its error text. The request is also the
/// key the panel matches the answer with, so a stale answer (the user moved on) is told apart.
package protocol PortRequest: Hashable, Sendable {
    associatedtype Port: Sendable
    associatedtype Answer: Hashable, Sendable

    /// Asks `port`. Runs on a background thread; may take seconds (MiniLM, an SAE's index).
    func ask(_ port: Port) throws -> Answer

    /// Set for a request that may take seconds: it then runs as a job under this title, shown
    /// in the status bar with its progress, counted by the quit dialog and cancelled on quit.
    var jobTitle: String? { get }

    /// ``ask(_:)`` with progress and cancellation, for requests with a ``jobTitle``.
    func ask(_ port: Port, reporter: JobReporter) throws -> Answer
}

extension PortRequest {
    package var jobTitle: String? { nil }

    package func ask(_ port: Port, reporter: JobReporter) throws -> Answer { try ask(port) }
}
