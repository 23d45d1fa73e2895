import Foundation
import LoupeBase
import LoupeEvals
import LoupeStore

extension ReviewService {
    package enum ExportFormat: String, CaseIterable, Sendable {
        case jsonl, csv
    }

    /// Every label of a queue, one row per (item, criterion, annotator), with what the item points
    /// at (run, item and epoch, or trace) so the file stands alone.
    package func export(_ queue: Queue, format: ExportFormat) throws -> String {
        let items = Dictionary(
            try reviews.reviewItems(queue: queue.id).map { ($0.itemKey, $0) }, uniquingKeysWith: { a, _ in a })
        let labels = try reviews.reviewLabels(queue: queue.id)
        let time = ISO8601DateFormatter()
        let columns = [
            "queue", "item", "run", "item_id", "epoch", "trace", "criterion", "value", "annotator", "rubric",
            "rubric_version", "rubric_hash", "origin", "created_at",
        ]
        let rows: [[JSONValue]] = labels.map { label in
            let item = items[label.itemKey]
            return [
                .string(queue.name), .string(label.itemKey), item?.runID.map { .number(Double($0)) } ?? .null,
                item?.evalItemID.map(JSONValue.string) ?? .null, item?.epoch.map { .number(Double($0)) } ?? .null,
                item?.traceID.map { .number(Double($0)) } ?? .null, .string(label.criterion), .string(label.value),
                .string(label.annotator), .string(queue.rubric.name), .number(Double(label.rubricVersion)),
                .string(label.rubricHash), .string(label.origin), .string(time.string(from: label.createdAt)),
            ]
        }
        switch format {
        case .jsonl:
            return rows.map { row in
                JSONValue.object(Dictionary(uniqueKeysWithValues: zip(columns, row))).compactJSON + "\n"
            }.joined()
        case .csv:
            let lines =
                [columns.joined(separator: ",")]
                + rows.map { row in
                    row.map { value in value == .null ? "" : EvalService.csvField(value.text) }.joined(separator: ",")
                }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// What an import of labels stored.
    package struct LabelImport: Hashable, Sendable {
        /// The labels the queue holds from this file: one per item, criterion and annotator.
        package var labels = 0
        /// Lines that replaced a label: one already in the queue, or an earlier line of the file
        /// for the same item, criterion and annotator (the later line wins).
        package var replaced = 0

        package init(labels: Int = 0, replaced: Int = 0) {
            self.labels = labels
            self.replaced = replaced
        }
    }

    /// Reads labels made elsewhere: JSON Lines of `item` (the queue's item key), `criterion`,
    /// `value` and `annotator` (an export's other fields are ignored). Every line is checked
    /// against the queue and its rubric before anything is stored; a mistake is reported at
    /// file:line:column and stores nothing.
    ///
    /// A line's `queue` field, when it has one, must name `queue` or `otherQueue`: an export of
    /// another queue is imported only when asked for by name, so a file given to the wrong queue
    /// is refused instead of labelling its items.
    @discardableResult
    package func importLabels(
        _ queue: Queue, file: String, from otherQueue: String? = nil, at date: Date = Date()
    ) throws -> LabelImport {
        let data: [UInt8]
        do { data = try TextFile.bytes(file) } catch { throw ReviewError("\(error)") }
        let keys = Set(try reviews.reviewItems(queue: queue.id).map(\.itemKey))
        // Item, criterion and annotator: a label's identity, which a later one replaces.
        func identity(_ label: ReviewLabelRecord) -> [String] { [label.itemKey, label.criterion, label.annotator] }
        var held = Set(try reviews.reviewLabels(queue: queue.id).map(identity))
        var report = LabelImport()
        var labels: [ReviewLabelRecord] = []
        var line = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            line += 1
            let bytes = raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw
            guard bytes.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { continue }
            func failure(_ message: String, column: Int? = nil) -> SuiteError {
                SuiteError(file: file, line: line, column: column, message)
            }
            let value: JSONValue
            do { value = try JSONValue.parse(Data(bytes)) } catch {
                throw failure("not valid JSON: \(error.message)", column: error.column)
            }
            guard let fields = value.object else { throw failure("each line is a JSON object") }
            func text(_ name: String) throws -> String {
                guard let field = fields[name] else { throw failure("no '\(name)' field") }
                switch field {
                case .string(let text): return text
                case .number, .bool: return field.compactJSON
                default: throw failure("'\(name)' must be text, a number or true/false")
                }
            }
            if fields["queue"] != nil {
                let named = try text("queue")
                guard named == queue.name || named == otherQueue else {
                    throw failure(
                        "the label is for queue \(named), not \(queue.name): import it into \(named), or add "
                            + "--from-queue \(named) to import \(named)'s labels into \(queue.name)")
                }
            }
            let key = try text("item")
            guard keys.contains(key) else { throw failure("queue \(queue.name) has no item \(key)") }
            let given = try text("annotator")
            let annotator: String
            do { annotator = try Self.annotator(given, environment: [:]) } catch { throw failure(error.description) }
            let name = try text("criterion")
            guard let criterion = queue.rubric.criterion(name) else {
                throw failure("rubric \(queue.rubric.name) has no criterion \(name)")
            }
            let read: Rubric.Value
            switch criterion.value(try text("value")) {
            case .success(let value): read = value
            case .failure(let error): throw failure(error.description)
            }
            labels.append(
                ReviewLabelRecord(
                    queueID: queue.id, itemKey: key, criterion: name, value: read.description, number: read.number,
                    annotator: annotator, rubricVersion: queue.rubric.version, rubricHash: queue.record.rubricHash,
                    origin: "import", createdAt: date))
            if !held.insert(identity(labels[labels.count - 1])).inserted { report.replaced += 1 }
        }
        try reviews.addReviewLabels(labels)
        report.labels = Set(labels.map(identity)).count
        return report
    }
}
