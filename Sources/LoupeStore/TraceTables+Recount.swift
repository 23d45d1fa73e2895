import Foundation
import LoupeBase

extension TraceTables {
    // MARK: - Totals

    /// What a trace's spans add up to, from their stored columns in tree order: the steps, the
    /// tokens, the cost and the model usage, each model call counted once (a call that a span
    /// below it records again is left out, ``NestedModelCalls``). Sums go in tree order, so a cost
    /// is the same double an import of the whole trace adds up (Trace, TraceService.record).
    struct Totals {
        /// The spans that are steps (not agent or other spans) and count.
        private(set) var work = 0
        private(set) var inputTokens: Int?
        private(set) var outputTokens: Int?
        private(set) var cost: Double?
        private(set) var usage = ModelUsageSums()
        /// Whether a model call was left out because a span below it records it again.
        private(set) var leftOut = false

        init(_ nodes: Columns, in sequence: some Sequence<Int>) {
            func add<T: AdditiveArithmetic>(_ a: T?, _ b: T?) -> T? {
                a == nil && b == nil ? nil : (a ?? .zero) + (b ?? .zero)
            }
            let isModelCall = nodes.kind.map { $0 == "llm" }
            let outer = NestedModelCalls.outer(
                ids: nodes.spanID, parents: nodes.parentID, isModelCall: isModelCall,
                carriesUsage: nodes.spanID.indices.map {
                    NestedModelCalls.carriesUsage(
                        inputTokens: nodes.inputTokens[$0], outputTokens: nodes.outputTokens[$0], cost: nodes.cost[$0])
                })
            leftOut = outer.contains(true)
            for i in sequence {
                if outer[i] { continue }
                if nodes.kind[i] != "agent" && nodes.kind[i] != "other" { work += 1 }
                inputTokens = add(inputTokens, nodes.inputTokens[i])
                outputTokens = add(outputTokens, nodes.outputTokens[i])
                cost = add(cost, nodes.cost[i])
                if isModelCall[i] {
                    usage.add(
                        model: nodes.model[i], inputTokens: nodes.inputTokens[i], outputTokens: nodes.outputTokens[i],
                        cacheReadTokens: nodes.cacheReadTokens[i], cost: nodes.cost[i])
                }
            }
        }

        /// The step count of a trace of `spans` spans: its steps, or all its spans when none is one.
        func steps(of spans: Int) -> Int { work > 0 ? work : spans }
    }

    // MARK: - Counting nested model calls once

    /// The migration that repairs the totals of traces stored while a model call recorded at two
    /// levels of one trace counted twice.
    package static let recountMigration = "v28: a model call recorded twice in one trace counted once"

    /// Recomputes the step count, tokens, cost and model usage of every trace in which a model
    /// call is recorded again by a span below it (an agent framework's generation span over `loupe
    /// serve`'s chat span, through `traceparent`): stores before the rule counted such a call
    /// twice, and the totals keep what the store computed until the trace changes. Traces without
    /// a nested call are left as they are, byte for byte. The migration's, on SQLite and on
    /// PostgreSQL alike; the traces repaired.
    @discardableResult
    package static func recountNestedModelCalls(into sql: any SQLStatements) throws -> Int {
        // Only a trace with two model calls carrying usage can hold one inside another.
        let candidates = try sql.execute(
            """
            SELECT trace_id FROM spans
            WHERE kind = 'llm' AND (input_tokens IS NOT NULL OR output_tokens IS NOT NULL OR cost IS NOT NULL)
            GROUP BY trace_id HAVING COUNT(*) > 1 ORDER BY trace_id
            """, []
        ).compactMap { $0.integer("trace_id") }
        var repaired = 0
        for id in candidates {
            let nodes = try Columns(trace: id, sql)
            // Stored ordinals are tree order: imports and appends both keep them so.
            let totals = Totals(nodes, in: 0..<nodes.count)
            guard totals.leftOut else { continue }
            try sql.execute(
                "UPDATE traces SET step_count = ?, input_tokens = ?, output_tokens = ?, cost = ? WHERE id = ?",
                [
                    SQLValue(totals.steps(of: nodes.count)), SQLValue(totals.inputTokens),
                    SQLValue(totals.outputTokens), SQLValue(totals.cost), .integer(id),
                ])
            try writeUsage([(id, totals.usage)], into: sql)
            repaired += 1
        }
        return repaired
    }
}
