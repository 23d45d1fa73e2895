import Foundation
import LoupeBase

extension TraceTables {
    // MARK: - Model usage

    /// A trace's `trace_model_usage` rows while they are summed: per model (nil for calls that
    /// name none), the calls, their tokens, their recorded costs and how many recorded one. Every
    /// path that stores spans sums here, in tree order, the model calls that count
    /// (``NestedModelCalls``: one a span below it records again does not), so an import, a trace
    /// grown request by request and one reordered from its columns keep the same rows.
    struct ModelUsageSums {
        struct Sums {
            var calls = 0
            var inputTokens: Int64?
            var outputTokens: Int64?
            var cacheReadTokens: Int64?
            var cost: Double?
            var costed = 0
        }

        /// Models in the order first summed, and their sums.
        private(set) var order: [String?] = []
        private(set) var sums: [String?: Sums] = [:]

        init() {}

        /// The rows trace `id` holds now.
        init(trace id: Int64, _ sql: any SQLStatements) throws {
            for row in try sql.execute(
                "SELECT model, calls, input_tokens, output_tokens, cache_read_tokens, cost, costed "
                    + "FROM trace_model_usage WHERE trace_id = ?", [.integer(id)])
            {
                let v = row.values
                order.append(v[0].text)
                sums[v[0].text] = Sums(
                    calls: Int(v[1].integer ?? 0), inputTokens: v[2].integer, outputTokens: v[3].integer,
                    cacheReadTokens: v[4].integer, cost: v[5].real, costed: Int(v[6].integer ?? 0))
            }
        }

        /// Adds one model call, as the last of those summed.
        mutating func add(model: String?, inputTokens: Int?, outputTokens: Int?, cacheReadTokens: Int?, cost: Double?) {
            func add<T: AdditiveArithmetic>(_ a: T?, _ b: T?) -> T? {
                a == nil && b == nil ? nil : (a ?? .zero) + (b ?? .zero)
            }
            if sums[model] == nil { order.append(model) }
            var row = sums[model] ?? Sums()
            row.calls += 1
            row.inputTokens = add(row.inputTokens, inputTokens.map(Int64.init))
            row.outputTokens = add(row.outputTokens, outputTokens.map(Int64.init))
            row.cacheReadTokens = add(row.cacheReadTokens, cacheReadTokens.map(Int64.init))
            row.cost = add(row.cost, cost)
            if cost != nil { row.costed += 1 }
            sums[model] = row
        }

        /// Adds the model calls of `spans` (a trace's, in tree order) that count.
        mutating func add(counted spans: [SpanRow]) {
            let outer = NestedModelCalls.outer(
                ids: spans.map(\.spanID), parents: spans.map(\.parentSpanID),
                isModelCall: spans.map { $0.kind == "llm" },
                carriesUsage: spans.map {
                    NestedModelCalls.carriesUsage(
                        inputTokens: $0.inputTokens, outputTokens: $0.outputTokens, cost: $0.cost)
                })
            for (i, span) in spans.enumerated() where span.kind == "llm" && !outer[i] {
                add(
                    model: span.model, inputTokens: span.inputTokens, outputTokens: span.outputTokens,
                    cacheReadTokens: span.cacheReadTokens, cost: span.cost)
            }
        }

        static let columns = [
            "trace_id", "model", "calls", "input_tokens", "output_tokens", "cache_read_tokens", "cost", "costed",
        ]

        /// The rows, for trace `id`.
        func rows(trace id: Int64) -> [[SQLValue]] {
            order.map { model in
                let row = sums[model] ?? Sums()
                return [
                    .integer(id), SQLValue(model), SQLValue(row.calls), SQLValue(row.inputTokens),
                    SQLValue(row.outputTokens), SQLValue(row.cacheReadTokens), SQLValue(row.cost), SQLValue(row.costed),
                ]
            }
        }
    }

    /// Replaces the `trace_model_usage` rows of each trace given with `sums`.
    static func writeUsage(_ sums: [(trace: Int64, sums: ModelUsageSums)], into sql: any SQLStatements) throws {
        guard !sums.isEmpty else { return }
        for start in stride(from: 0, to: sums.count, by: 8_000) {
            let chunk = sums[start..<min(sums.count, start + 8_000)]
            try sql.execute(
                "DELETE FROM trace_model_usage WHERE trace_id IN (\(StoreTable.placeholders(chunk.count)))",
                chunk.map { .integer($0.trace) })
        }
        try sql.insertRows(
            into: "trace_model_usage", columns: ModelUsageSums.columns,
            rows: sums.flatMap { $0.sums.rows(trace: $0.trace) })
    }
}
