import Foundation
import LoupeStore

extension WorkspaceCopy {
    /// What `workspace copy --since DATE` takes of each table: the work made since then, with
    /// everything under it and everything it refers to, in SQL both backends run.
    ///
    /// - A root is chosen when it was made since DATE: a trace imported, an eval run started, a
    ///   review queue made, a machine profile or kernel run measured, a corpus source ingested, an
    ///   activation set made, a profiler trace imported, a retrieval record or evaluation kept, a
    ///   history line run, a setting changed.
    /// - Work added since DATE under an older root chooses the root too: an answer finished in an
    ///   older run, a label given or an item skipped in an older queue, a kernel run against an
    ///   older profile, a training step of an older SAE. The root comes with everything under it
    ///   (rows already at the destination are left alone, as ever).
    /// - What a chosen row refers to comes along: an answer's trace and retrieval record, a review
    ///   item's answer run and trace, a fork's parent trace, a resumed run's parent run (each to
    ///   the first of its line).
    /// - Tables without a time (prices, judgments) come whole; `job_leases` never does.
    ///
    /// Dates are compared as stored: GRDB's UTC text, which sorts as time on both backends.
    package struct Since: Sendable {
        /// The stored form of the date: what the conditions compare with.
        package let stamp: SQLValue

        package init(_ date: Date) { stamp = SQLValue(date: date) }

        /// The condition on each table (nil: every row), its `?` each the date.
        package static let conditions: [String: String?] = {
            let queues =
                "(SELECT id FROM review_queues WHERE created_at >= ? "
                + "OR id IN (SELECT queue_id FROM review_labels WHERE created_at >= ?) "
                + "OR id IN (SELECT queue_id FROM review_skips WHERE skipped_at >= ?))"
            let runs = """
                (WITH RECURSIVE chosen_runs(id) AS (
                    SELECT id FROM eval_runs WHERE started_at >= ?
                        OR id IN (SELECT run_id FROM eval_results WHERE finished_at >= ?)
                        OR id IN (SELECT run_id FROM review_items WHERE queue_id IN \(queues))
                    UNION SELECT r.parent_run_id FROM eval_runs r JOIN chosen_runs c ON r.id = c.id
                        WHERE r.parent_run_id IS NOT NULL)
                SELECT id FROM chosen_runs)
                """
            let traces = """
                (WITH RECURSIVE chosen_traces(id) AS (
                    SELECT id FROM traces WHERE imported_at >= ?
                        OR id IN (SELECT trace_id FROM eval_results WHERE run_id IN \(runs))
                        OR id IN (SELECT trace_id FROM review_items WHERE queue_id IN \(queues))
                    UNION SELECT t.parent_trace_id FROM traces t JOIN chosen_traces c ON t.id = c.id
                        WHERE t.parent_trace_id IS NOT NULL)
                SELECT id FROM chosen_traces)
                """
            let profiles =
                "(SELECT id FROM machine_profiles WHERE measured_at >= ? "
                + "OR id IN (SELECT profile_id FROM kernel_runs WHERE measured_at >= ?))"
            let sources = "(SELECT id FROM sources WHERE ingested_at >= ?)"
            let documents = "(SELECT id FROM documents WHERE source_id IN \(sources))"
            let sets =
                "(SELECT id FROM sae_activation_sets WHERE created_at >= ? "
                + "OR id IN (SELECT set_id FROM sae_models WHERE updated_at >= ?))"
            let models = "(SELECT id FROM sae_models WHERE set_id IN \(sets))"
            let profilerTraces = "(SELECT id FROM profiler_traces WHERE imported_at >= ?)"
            return [
                "settings": "updated_at >= ?",
                "command_history": "ran_at >= ?",
                "models": "registered_at >= ?",
                "model_prices": nil,
                "machine_profiles": "id IN \(profiles)",
                "ceilings": "profile_id IN \(profiles)",
                "kernel_runs": "measured_at >= ?",
                "sources": "id IN \(sources)",
                "documents": "id IN \(documents)",
                "chunks": "document_id IN \(documents)",
                "retrieval_indexes": "built_at >= ?",
                "qrels": nil,
                "qrels_queries": nil,
                "retrieval_records":
                    "created_at >= ? OR id IN (SELECT retrieval_record_id FROM eval_results WHERE run_id IN \(runs))",
                "retrieval_evals": "created_at >= ?",
                "ann_sweeps": "measured_at >= ?",
                "traces": "id IN \(traces)",
                "spans": "trace_id IN \(traces)",
                "trace_scores": "trace_id IN \(traces)",
                "trace_model_usage": "trace_id IN \(traces)",
                "eval_runs": "id IN \(runs)",
                "eval_results": "run_id IN \(runs)",
                "eval_scores": "run_id IN \(runs)",
                "eval_work_items": "run_id IN \(runs)",
                "sae_activation_sets": "id IN \(sets)",
                "sae_activation_shards": "set_id IN \(sets)",
                "sae_tokens": "set_id IN \(sets)",
                "sae_models": "set_id IN \(sets)",
                "sae_training_log": "model_id IN \(models)",
                "sae_feature_labels": "model_id IN \(models)",
                "sae_feature_indexes": "model_id IN \(models)",
                "review_queues": "id IN \(queues)",
                "review_items": "queue_id IN \(queues)",
                "review_assignments": "queue_id IN \(queues)",
                "review_labels": "queue_id IN \(queues)",
                "review_skips": "queue_id IN \(queues)",
                "profiler_traces": "id IN \(profilerTraces)",
                "profiler_names": "trace_id IN \(profilerTraces)",
                "profiler_events": "trace_id IN \(profilerTraces)",
                "profiler_lanes": "trace_id IN \(profilerTraces)",
            ]
        }()

        /// The condition on `table` with its arguments, nil for every row.
        ///
        /// - Throws: ``WorkspaceError`` for a table with no rule (one added without saying
        ///   how `--since` chooses its rows).
        func condition(_ table: String) throws(WorkspaceError) -> (sql: String, arguments: [SQLValue])? {
            guard let rule = Self.conditions[table] else {
                throw WorkspaceError(
                    .database, path: table, message: "workspace copy --since does not know how to choose its rows")
            }
            guard let rule else { return nil }
            let count = rule.utf8.filter { $0 == UInt8(ascii: "?") }.count
            return ("(\(rule))", Array(repeating: stamp, count: count))
        }

        /// Parses `--since`: a date or a date and time in UTC (`2026-11-20`, `2026-11-20 14:30`,
        /// `2026-11-20T14:30:00Z`), or a time back from `now` (`36h`, `7d`).
        package static func parse(_ text: String, now: Date = Date()) -> Date? {
            let trimmed = text.trimmingCharacters(in: .whitespaces)
            if let unit = trimmed.last, "hd".contains(unit), let amount = Double(trimmed.dropLast()), amount >= 0 {
                return now.addingTimeInterval(-amount * (unit == "h" ? 3600 : 86400))
            }
            var normalized = trimmed.replacingOccurrences(of: "T", with: " ")
            if normalized.hasSuffix("Z") { normalized.removeLast() }
            for format in ["yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm", "yyyy-MM-dd"] {
                if let date = utc(format).date(from: normalized) { return date }
            }
            return nil
        }

        /// A date as `--since` takes one, to the minute, in UTC (`2026-11-20 14:30`).
        package static func describe(_ date: Date) -> String { utc("yyyy-MM-dd HH:mm").string(from: date) }

        private static func utc(_ format: String) -> DateFormatter {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = format
            return formatter
        }
    }
}
