import Dispatch
import Synchronization

/// Runs async work from a synchronous command (ArgumentParser's `run`) and waits for it on this
/// thread, which is not one of the concurrency pool's.
package func awaitFromSync<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
    let done = DispatchSemaphore(value: 0)
    let outcome = Mutex<Result<Value, any Error>?>(nil)
    Task {
        let result: Result<Value, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        outcome.withLock { $0 = result }
        done.signal()
    }
    done.wait()
    return try outcome.withLock { $0 }!.get()
}
