import LoupeKit
import Synchronization

/// Messages posted from job threads to the UI thread.
final class Mailbox: Sendable {
    private let messages = Mutex<[Msg]>([])

    func post(_ msg: Msg) {
        messages.withLock { $0.append(msg) }
    }

    /// Whether a message waits (the loop then does not wait for input).
    var isEmpty: Bool { messages.withLock { $0.isEmpty } }

    /// Takes every waiting message; progress reports for the same job are coalesced to the
    /// newest, so a chatty job cannot flood the loop.
    func drain() -> [Msg] {
        let taken = messages.withLock { pending -> [Msg] in
            let all = pending
            pending.removeAll(keepingCapacity: true)
            return all
        }
        var latestProgress: [Int: Int] = [:]
        for (index, msg) in taken.enumerated() {
            if case .jobProgress(let id, _) = msg { latestProgress[id.rawValue] = index }
        }
        return taken.enumerated().compactMap { index, msg in
            if case .jobProgress(let id, _) = msg, latestProgress[id.rawValue] != index { return nil }
            return msg
        }
    }
}
