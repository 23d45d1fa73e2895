import Foundation
import LoupeModels
import Synchronization

/// Runs one sequence at a time on a thread of its own, in the order they came; a bounded queue
/// in front of it refuses (``SchedulerRefusal/full(waiting:capacity:)``) rather than grow.
///
/// Generation is CPU-bound and synchronous, so it runs on a dedicated thread, never on the
/// cooperative pool the HTTP handlers share. A sequence whose stream is dropped is cancelled:
/// skipped if still queued, stopped before its next decode step if running.
package final class SerialScheduler: CompletionScheduler {
    package let generator: Generator
    package let modelName: String
    /// The most sequences queued or running at once.
    package let capacity: Int
    /// Speculative decoding for every request that does not choose its own (`serve --speculate`).
    package let speculation: SpeculationOptions?

    private typealias Entry = CompletionEntry

    private struct State {
        var queue: [Entry] = []
        var running = false
        var stopping = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// - Parameters:
    ///   - capacity: the most sequences queued or running at once (at least 1).
    ///   - speculation: prompt-lookup decoding for each request (the same tokens, fewer passes).
    package init(generator: Generator, modelName: String, capacity: Int, speculation: SpeculationOptions? = nil) {
        precondition(capacity >= 1, "a scheduler holds at least one sequence")
        self.generator = generator
        self.modelName = modelName
        self.capacity = capacity
        self.speculation = speculation
        let thread = Thread { [self] in work() }
        thread.name = "loupe-generate"
        thread.start()
    }

    /// Sequences queued or running now.
    package var waiting: Int { state.withLock { $0.queue.count + ($0.running ? 1 : 0) } }

    package func submit(_ job: CompletionJob) throws(SchedulerRefusal) -> CompletionTicket {
        let (entry, stream) = Entry.make(job)
        let refusal = state.withLock { state -> SchedulerRefusal? in
            if state.stopping { return .stopping }
            let waiting = state.queue.count + (state.running ? 1 : 0)
            if waiting >= capacity { return .full(waiting: waiting, capacity: capacity) }
            state.queue.append(entry)
            return nil
        }
        if let refusal { throw refusal }
        wake.signal()
        return CompletionTicket(events: stream, cancel: { entry.cancelled.store(true, ordering: .relaxed) })
    }

    package func shutdown() {
        let dropped = state.withLock { state -> [Entry] in
            state.stopping = true
            defer { state.queue = [] }
            return state.queue
        }
        for entry in dropped { entry.continuation.finish(throwing: SchedulerRefusal.stopping) }
        wake.signal()
    }

    private func work() {
        while true {
            wake.wait()
            while let entry = next() {
                run(entry)
                state.withLock { $0.running = false }
            }
            if state.withLock({ $0.stopping && $0.queue.isEmpty }) { return }
        }
    }

    private func next() -> Entry? {
        state.withLock { state -> Entry? in
            guard !state.queue.isEmpty else { return nil }
            state.running = true
            return state.queue.removeFirst()
        }
    }

    private func run(_ entry: Entry) {
        // A client that left while its request waited costs nothing.
        guard !entry.cancelled.load(ordering: .relaxed) else {
            entry.continuation.finish()
            return
        }
        var options = entry.job.options
        if options.speculation == nil { options.speculation = speculation }
        do {
            let generation = try generator.generate(
                prompt: entry.job.prompt, options: options,
                isCancelled: { entry.cancelled.load(ordering: .relaxed) },
                onText: { text, token in entry.continuation.yield(.text(text, token)) })
            entry.continuation.yield(.finished(generation))
            entry.continuation.finish()
        } catch {
            entry.continuation.finish(throwing: error)
        }
    }
}
