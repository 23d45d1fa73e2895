import Foundation
import LoupeStore

/// A session: the traces (turns) that carry one session or conversation id, in the order they
/// started, with their totals.
package struct TraceSession: Hashable, Sendable {
    package var id: String
    /// Its turns, earliest start first.
    package var turns: [TraceSummary]

    package var startedNs: Int64 { turns.map(\.startedNs).min() ?? 0 }
    package var endedNs: Int64 { turns.map(\.endedNs).max() ?? 0 }
    package var durationNs: Int64 { max(0, endedNs - startedNs) }
    package var inputTokens: Int? { Self.sum(turns.map(\.inputTokens)) }
    package var outputTokens: Int? { Self.sum(turns.map(\.outputTokens)) }
    /// Nil ("no price") when a turn's cost is not known; a turn that used no tokens (a run a
    /// guardrail stopped before any model call) costs nothing.
    package var cost: Double? {
        turns.reduce(Double?(0)) { total, turn in
            if turn.cost == nil && turn.inputTokens == nil && turn.outputTokens == nil { return total }
            return total.flatMap { a in turn.cost.map { a + $0 } }
        }
    }
    package var errorCount: Int { turns.reduce(0) { $0 + $1.errorCount } }
    package var steps: Int { turns.reduce(0) { $0 + $1.stepCount } }
    /// The models its turns called, in name order.
    package var models: [String] { Array(Set(turns.flatMap(\.models))).sorted() }
    package func isLive(now: Date = Date()) -> Bool { turns.contains { $0.isLive(now: now) } }

    private static func sum(_ values: [Int?]) -> Int? {
        let known = values.compactMap { $0 }
        return known.isEmpty ? nil : known.reduce(0, +)
    }
}

extension TraceService {
    /// Every session, the most recently started first; traces that name no session are in none.
    package func sessions() throws -> [TraceSession] {
        Self.sessions(of: try list())
    }

    /// One session's turns in order, or nil when no trace carries `id`.
    package func session(_ id: String) throws -> TraceSession? {
        try sessions().first { $0.id == id }
    }

    /// Groups trace rows by their session id.
    package static func sessions(of traces: [TraceSummary]) -> [TraceSession] {
        var order: [String] = []
        var turns: [String: [TraceSummary]] = [:]
        for trace in traces {
            guard let id = trace.sessionID else { continue }
            if turns[id] == nil { order.append(id) }
            turns[id, default: []].append(trace)
        }
        return order.map { id in
            TraceSession(
                id: id,
                turns: turns[id]!.sorted {
                    $0.startedNs != $1.startedNs ? $0.startedNs < $1.startedNs : $0.id < $1.id
                })
        }.sorted { $0.startedNs != $1.startedNs ? $0.startedNs > $1.startedNs : $0.id < $1.id }
    }
}
