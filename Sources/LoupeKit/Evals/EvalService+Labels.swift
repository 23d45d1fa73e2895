import Foundation
import LoupeBase
import LoupeStore

extension EvalService {
    /// The longest label a run takes, in characters: a label names a run in a list, it is not a
    /// note.
    package static let longestLabel = 60

    /// The workspace setting a run's label is kept under. A setting, not a column of `eval_runs`:
    /// that table's schema is shared with the PostgreSQL store, and a label is a name people give
    /// a run after it ran, not part of its record.
    static func labelKey(_ run: Int64) -> String { "eval.run.\(run).label" }

    /// The label set on `run` (`loupe eval label`), nil when none is.
    package func label(run: Int64) throws -> String? {
        let stored = try SettingsTables(evals.database).setting(Self.labelKey(run))
        return stored.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Names `run` with `text` (trimmed; empty clears the label), so runs of one suite or task
    /// are told apart in the runs list. Throws when there is no such run or the text is too long.
    package func setLabel(_ text: String, run: Int64) throws {
        guard try evals.evalRun(run) != nil else { throw EvalError("no eval run \(run): loupe eval list shows them") }
        let label = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard label.count <= Self.longestLabel else {
            throw EvalError("a label is at most \(Self.longestLabel) characters; this one has \(label.count)")
        }
        try SettingsTables(evals.database).setSetting(Self.labelKey(run), to: label)
    }
}
