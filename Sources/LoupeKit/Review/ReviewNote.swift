import Foundation
import LoupeEvals
import LoupeStore

extension ReviewService {
    /// The note (the rubric's text criterion) `annotator` wrote on an item: what `dataset add
    /// --expected-note` takes as the expected output.
    package func note(queue name: String, key: String, annotator: String) throws -> String {
        let queue = try self.queue(name)
        let notes = Set(queue.rubric.criteria.filter { $0.kind == .text }.map(\.name))
        guard !notes.isEmpty else { throw ReviewError("rubric \(queue.rubric.name) has no note (text) criterion") }
        guard
            let label = try reviews.reviewLabels(queue: queue.id).last(where: {
                $0.itemKey == key && $0.annotator == annotator && notes.contains($0.criterion)
            })
        else { throw ReviewError("\(annotator) wrote no note on \(key) in \(queue.name)") }
        return label.value
    }
}
