import LoupeModels
import Synchronization

/// One sequence to generate: the prompt's token ids and how to generate after them.
package struct CompletionJob: Sendable {
    package var prompt: [Int32]
    package var options: GenerationOptions

    package init(prompt: [Int32], options: GenerationOptions) {
        self.prompt = prompt
        self.options = options
    }
}

/// What a scheduled sequence reports, in order: text as it becomes final, then the whole
/// generation once it has ended.
package enum CompletionEvent: Sendable {
    /// Text a token made final (possibly empty while a character or a stop string is incomplete),
    /// with that token; a nil token carries the text released at the end.
    case text(String, GeneratedToken?)
    /// The sequence ended (its stop reason says why, ``StopReason/cancelled`` included).
    case finished(Generation)
}

/// A queued sequence: its events, and how to cancel it.
package struct CompletionTicket: Sendable {
    package var events: AsyncThrowingStream<CompletionEvent, any Error>
    package var cancel: @Sendable () -> Void

    package init(events: AsyncThrowingStream<CompletionEvent, any Error>, cancel: @escaping @Sendable () -> Void) {
        self.events = events
        self.cancel = cancel
    }
}

/// Why a scheduler did not take a sequence.
package enum SchedulerRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// `waiting` sequences are queued or running, the most it holds; retry after a while.
    case full(waiting: Int, capacity: Int)
    /// The server is stopping.
    case stopping

    package var description: String {
        switch self {
        case .full(let waiting, let capacity):
            "the model is busy: \(waiting) requests are running or queued (the queue holds \(capacity)); retry later"
        case .stopping: "the server is stopping"
        }
    }
}

/// Where the OpenAI endpoint sends sequences to be generated: the one seam between the HTTP side
/// and the model. ``SerialScheduler`` runs one sequence at a time; a batched decoder that lets
/// sequences join and leave between decode steps implements the same protocol.
///
/// A sequence's events end with ``CompletionEvent/finished(_:)`` or an error (a ``ModelError``
/// for a prompt that does not fit). Ending the stream early (a client that went away) cancels the
/// sequence: it is dropped from the queue, or stops at its next decode step.
package protocol CompletionScheduler: Sendable {
    /// The model's name, as `/v1/models` lists it.
    var modelName: String { get }

    /// The tokenizer and chat template prompts are made with.
    var generator: Generator { get }

    /// Queues `job`; refuses at once when the queue is full. The ticket's `cancel` stops the
    /// sequence (a client that went away), as ending its stream does.
    func submit(_ job: CompletionJob) throws(SchedulerRefusal) -> CompletionTicket

    /// Refuses new sequences, cancels those queued, and lets the running ones finish.
    func shutdown()

    /// Key/value cache blocks held by running sequences and in the pool, for `/metrics`; nil for a
    /// cache that is not paged.
    var keyValueBlocks: (inUse: Int, total: Int)? { get }
}

extension CompletionScheduler {
    /// None: the cache is contiguous, one per sequence.
    package var keyValueBlocks: (inUse: Int, total: Int)? { nil }
}

/// A submitted job as a scheduler holds it: its stream's continuation and a cancelled flag that
/// a dropped stream or the ticket's cancel sets, read by the scheduler between decode steps.
final class CompletionEntry: Sendable {
    let job: CompletionJob
    let continuation: AsyncThrowingStream<CompletionEvent, any Error>.Continuation
    let cancelled = Atomic<Bool>(false)

    private init(job: CompletionJob, continuation: AsyncThrowingStream<CompletionEvent, any Error>.Continuation) {
        self.job = job
        self.continuation = continuation
    }

    /// The entry for `job` and the stream its ticket hands out; dropping the stream cancels it.
    static func make(_ job: CompletionJob) -> (CompletionEntry, AsyncThrowingStream<CompletionEvent, any Error>) {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: CompletionEvent.self)
        let entry = CompletionEntry(job: job, continuation: continuation)
        continuation.onTermination = { _ in entry.cancelled.store(true, ordering: .relaxed) }
        return (entry, stream)
    }
}
