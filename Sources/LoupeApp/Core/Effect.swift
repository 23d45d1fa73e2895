import LoupeKit

/// Work the runtime does for ``AppState/update(_:)``, which stays pure. Panels' reads are one
/// case, ``port(_:)``: the runtime knows no feature.
package enum Effect: Hashable, Sendable {
    case quit
    case suspend
    case redraw
    /// Run a command line as a job; results come back as ``Msg/jobFinished(_:_:)``.
    case runCommand(JobID, String)
    /// ``runCommand(_:_:)`` in another place: a scratch workspace, paths read from a directory.
    case runCommandIn(JobID, String, CommandPlace)
    /// Ask running jobs to stop.
    case cancelJobs
    /// Put text on the clipboard (OSC 52).
    case copy(String)
    /// Remember a `:` line in the workspace's history.
    case recordHistory(String)
    /// Open `text` in the user's editor (`$VISUAL`, `$EDITOR`, else `vi`) on the terminal; what
    /// was saved comes back as ``Msg/edited(_:text:error:)`` under `name`.
    case editText(name: String, text: String)
    /// Write an export (CSV, JSON) to a file.
    case writeFile(path: String, contents: String)
    /// Ask a panel's port something on a background thread; the answer comes back as
    /// ``Msg/answered(_:)``.
    case port(PortCall)
    /// ``port(_:)`` for a request with a ``PortRequest/jobTitle``: it runs as job `JobID` and
    /// comes back as ``Msg/readFinished(_:_:)``.
    case portJob(JobID, PortCall)

    /// Asks `request` of its port.
    package static func ask<Request: PortRequest>(_ request: Request) -> Effect { .port(PortCall(request)) }

    /// The port request this effect carries, when it is a `Request`.
    package func request<Request: PortRequest>(as type: Request.Type) -> Request? {
        switch self {
        case .port(let call), .portJob(_, let call): return call.request(as: type)
        default: return nil
        }
    }
}
