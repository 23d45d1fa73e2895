import Dispatch
import Foundation

/// Runs `body` on `count` threads of its own at once and returns when every one has returned.
///
/// For work that waits (a model call, a server's answer) rather than computes: Dispatch's
/// `concurrentPerform` runs no more iterations at a time than there are cores, so eight
/// concurrent model calls on two cores were two at a time.
package func onThreads(_ count: Int, _ body: @escaping @Sendable (_ index: Int) -> Void) {
    guard count > 1 else {
        if count == 1 { body(0) }
        return
    }
    let group = DispatchGroup()
    for index in 1..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    body(0)
    group.wait()
}
