import LoupeKit

extension SAEPanel {
    /// The workspace's SAEs with their settings, metrics and training curves.
    package struct ListSAEs: PortRequest {
        package init() {}

        package func ask(_ port: SAEBrowser) throws -> [SAEListing] { try port.listings() }
    }

    /// An SAE's features: its stored index, or its activation set encoded once (seconds, so it
    /// runs as a job: progress in the status bar, cancelled on quit).
    package struct LoadFeatures: PortRequest {
        package var model: Int64

        package init(model: Int64) {
            self.model = model
        }

        package var jobTitle: String? { "index SAE \(model)'s features" }

        package func ask(_ port: SAEBrowser) throws -> [SAEFeatureIndex.Summary] { try port.index(model).summaries }

        package func ask(_ port: SAEBrowser, reporter: JobReporter) throws -> [SAEFeatureIndex.Summary] {
            try port.index(model, reporter: reporter).summaries
        }
    }

    /// The features of an SAE whose index is already read, with their labels read again (another
    /// process labelled on a shared workspace): quick, so not a job.
    package struct RefreshLabels: PortRequest {
        package var model: Int64

        package init(model: Int64) {
            self.model = model
        }

        package func ask(_ port: SAEBrowser) throws -> [SAEFeatureIndex.Summary] { try port.relabelled(model) }
    }

    /// One feature's card.
    package struct LoadCard: PortRequest {
        package var model: Int64
        package var feature: Int

        package init(model: Int64, feature: Int) {
            self.model = model
            self.feature = feature
        }

        package func ask(_ port: SAEBrowser) throws -> SAEFeatureIndex.Card {
            try port.card(model: model, feature: feature)
        }
    }

    /// A text run through MiniLM and the SAE.
    package struct Activate: PortRequest {
        package var model: Int64
        package var text: String

        package init(model: Int64, text: String) {
            self.model = model
            self.text = text
        }

        package func ask(_ port: SAEBrowser) throws -> SAETextActivations {
            try port.activate(model: model, text: text)
        }
    }

    /// A feature's label stored (empty removes it); the answer is the features with it.
    package struct LabelFeature: PortRequest {
        package var model: Int64
        package var feature: Int
        package var label: String

        package init(model: Int64, feature: Int, label: String) {
            self.model = model
            self.feature = feature
            self.label = label
        }

        package func ask(_ port: SAEBrowser) throws -> [SAEFeatureIndex.Summary] {
            try port.label(model: model, feature: feature, label: label)
        }
    }
}
