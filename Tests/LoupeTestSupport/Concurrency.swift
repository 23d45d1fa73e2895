import Foundation
import GRDB
import Synchronization

/// Holds a workspace file's SQLite write lock from another connection, on its own thread, until
/// ``release()``: what another process writing looks like to the code under test. The held
/// transaction has written a row, so the WAL is not empty, and it is rolled back on release.
package final class WriteLockHolder: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let done = Atomic<Bool>(false)

    /// Returns once the lock is held.
    package init(file: String) throws {
        let holder = try DatabaseQueue(path: file)
        let holding = DispatchSemaphore(value: 0)
        let released = released
        Thread {
            try? holder.inTransaction(.immediate) { db in
                try db.execute(sql: "INSERT INTO settings (key, value, updated_at) VALUES ('held', 'x', '2026-01-01')")
                holding.signal()
                released.wait()
                return .rollback
            }
        }.start()
        holding.wait()
    }

    /// Lets the lock go (once; later calls do nothing).
    package func release() {
        guard !done.exchange(true, ordering: .relaxed) else { return }
        released.signal()
    }
}

/// `count` threads running the same body at once, started on creation; ``join()`` waits for
/// them all and returns their results.
package final class ThreadGroup<T: Sendable>: Sendable {
    private let results = Mutex<[T]>([])
    private let done = DispatchGroup()

    package init(_ count: Int, _ body: @escaping @Sendable () -> T) {
        for _ in 0..<count {
            done.enter()
            Thread {
                let result = body()
                self.results.withLock { $0.append(result) }
                self.done.leave()
            }.start()
        }
    }

    /// Every thread's result, once all have ended.
    package func join() -> [T] {
        done.wait()
        return results.withLock { $0 }
    }
}
