import LoupeKit
import LoupeTUI

/// What a panel asks for: a command run on its behalf (the result comes back through
/// ``Panel/commandFinished(tag:outcome:)``) or any app effect.
package enum PanelEffect: Hashable, Sendable {
    case run(String, tag: Int)
    /// ``run(_:tag:)`` in `place` (a notebook's scratch workspace and repository).
    case runIn(String, tag: Int, CommandPlace)
    case app(Effect)
    /// Show something in another panel (and focus it).
    case navigate(Navigation)
    /// Open the `:` line with a command to edit and run (a training run's settings).
    case editCommand(String)
    /// Say something on the status line (an export written, a key that has nothing to do here).
    case status(String, StatusLevel)

    /// Asks `request` of its port; the answer comes back to ``Panel/receive(_:)``.
    package static func ask<Request: PortRequest>(_ request: Request) -> PanelEffect { .app(.ask(request)) }
}
