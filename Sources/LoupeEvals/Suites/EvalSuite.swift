import LoupeAgents
import LoupeBase

/// An eval suite as its YAML file states it: a dataset, a target that answers each item, and the
/// scorers that judge the answers. Paths are resolved against the suite file's directory.
package struct EvalSuite: Hashable, Sendable {
    package var name: String
    package var description: String?
    /// The suite file, as given.
    package var file: String
    package var dataset: DatasetSpec
    package var target: EvalTarget
    package var scorers: [ScorerSpec]
    /// Trials per item (`--epochs` overrides).
    package var epochs: Int
    /// Items answered at once (`--concurrency` overrides).
    package var concurrency: Int

    package init(
        name: String, description: String? = nil, file: String, dataset: DatasetSpec, target: EvalTarget,
        scorers: [ScorerSpec], epochs: Int = 1, concurrency: Int = 1
    ) {
        self.name = name
        self.description = description
        self.file = file
        self.dataset = dataset
        self.target = target
        self.scorers = scorers
        self.epochs = epochs
        self.concurrency = concurrency
    }

    /// The scorer whose aggregate heads the run in lists: the first one.
    package var headline: String { scorers.first?.name ?? "" }
}
