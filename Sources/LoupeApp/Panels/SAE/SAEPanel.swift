import Foundation
import LoupeKit
import LoupeStore
import LoupeTUI

/// Sparse autoencoders trained on MiniLM's residual stream: the features of one SAE as a
/// sortable list (density, largest activation, label), a feature's card (its top contexts by
/// activation quantile shaded by activation, histogram, nearest vocabulary tokens and features),
/// a test text run through MiniLM and the SAE live, labels, and the training curves, which grow
/// while an SAE trains.
package struct SAEPanel: Panel {
    package let id = PanelID.sae
    package let title = "SAE"

    package enum View: String, Hashable, Sendable {
        case features = "Features"
        case card = "Feature card"
        case training = "Training"
    }

    /// The order of the feature list.
    package enum Order: String, CaseIterable, Sendable {
        case density, max, label, feature
    }

    /// Which line editor has the keyboard.
    package enum Field: Hashable, Sendable { case test, label }

    package private(set) var listings: [SAEListing]?
    package private(set) var selectedModel: Int64?
    package private(set) var features: [SAEFeatureIndex.Summary]?
    package private(set) var loadingFeatures: Int64?
    package var featureList = ListState()
    /// Strongest first, dense and dead features hidden: the list opens on sharp, rare features,
    /// which read best, rather than on the densest (firing on a third of all tokens).
    package private(set) var order = Order.max
    package private(set) var ascending = false
    package private(set) var hidesDenseAndDead = true
    /// Above this share of tokens a feature counts as dense (SAELens's 10%).
    package static let denseThreshold = 0.1
    package private(set) var view = View.features
    package private(set) var card: SAEFeatureIndex.Card?
    package private(set) var loadingCard: Int?
    package var testInput = LineEditor("The most important effect of the boundary layer is on drag.")
    package private(set) var test: SAETextActivations?
    package private(set) var loadingTest: String?
    package var labelInput = LineEditor()
    package private(set) var editing: Field?
    /// Points of the training curves reported by running `sae train` jobs, per SAE.
    package private(set) var live: [Int64: [SAELogRow]] = [:]
    package private(set) var error: String?
    /// The tab has been shown: features are worth indexing (seconds of work) from then on.
    private var wasShown = false
    /// The step of the SAE the features on show were indexed at.
    private var featuresStep: Int?
    private var exportWhenLoaded = false

    package init() {}

    package var keymap: Keymap {
        Keymap(
            "SAE",
            [
                KeyBinding([.enter], .panel(.open), help: "Open the selected feature's card", footer: "card"),
                KeyBinding(
                    [.character("s")], .panel(.own(Action.sort)),
                    help:
                        "Sort features by density, max, label, number (a SmolLM2 SAE's card: steer the next generation "
                        + "with the feature, sae steer on the : line)",
                    footer: view == .card && readsLanguageModel ? "steer" : "sort"),
                KeyBinding([.character("S")], .panel(.own(Action.reverse)), help: "Reverse the feature order"),
                KeyBinding(
                    [.character("H")], .panel(.own(Action.hide)),
                    help: "Hide or show the dense (on more than 10% of tokens) and dead features", footer: "dense/dead"),
                KeyBinding(
                    [.character("i")], .panel(.own(Action.test)),
                    help:
                        "Card: type a test text; enter runs its model (MiniLM or SmolLM2) + the SAE on it, shaded by the feature",
                    footer: "test text"),
                KeyBinding(
                    [.character("L")], .panel(.own(Action.label)),
                    help: "Label the feature (stored in the workspace; empty removes it)", footer: "label"),
                KeyBinding(
                    [.character("e")], .panel(.own(Action.export)),
                    help: "Export the feature's card as JSON (sae-<id>-feature-<n>.json)", footer: "export"),
                KeyBinding(
                    [.character("[")], .panel(.own(Action.previous)), help: "Card: the previous feature in the list"),
                KeyBinding([.character("]")], .panel(.own(Action.next)), help: "Card: the next feature in the list"),
                KeyBinding(
                    [.character("v")], .panel(.own(Action.training)),
                    help: "Training curves of the SAE (live while it trains) or back to its features",
                    footer: "training"),
                KeyBinding(
                    [.character("m")], .panel(.own(Action.model)), help: "Next SAE in the workspace", footer: "next SAE"
                ),
                KeyBinding(
                    [.character("t")], .panel(.own(Action.train)),
                    help: "Train: opens the : line with this SAE's settings (or --resume when it stopped early)"),
                KeyBinding([.control("r")], .panel(.own(Action.reload)), help: "Reload the SAEs"),
            ])
    }

    package var initialEffects: [PanelEffect] { [.ask(ListSAEs())] }
    package var capturesText: Bool { editing != nil }
    package var canGoBack: Bool { view != .features }
    package var isSearchable: Bool { view == .features }

    package mutating func goBack() {
        view = view == .card || view == .training ? .features : view
    }

    package mutating func shown() -> [PanelEffect] {
        wasShown = true
        return loadFeatures()
    }

    // MARK: - Data

    package var listing: SAEListing? { listings?.first { $0.id == selectedModel } }

    /// The features in list order.
    package var sortedFeatures: [SAEFeatureIndex.Summary] {
        guard var features else { return [] }
        if hidesDenseAndDead {
            features = features.filter { ($0.density > 0 && $0.density <= Self.denseThreshold) || $0.label != nil }
        }
        let ordered: [SAEFeatureIndex.Summary]
        switch order {
        case .density: ordered = features.sorted { ($0.density, $1.feature) < ($1.density, $0.feature) }
        case .max: ordered = features.sorted { ($0.maxActivation, $1.feature) < ($1.maxActivation, $0.feature) }
        case .feature: ordered = features
        case .label:
            // Labelled features first, alphabetically; the rest by number.
            ordered = features.sorted { a, b in
                switch (a.label, b.label) {
                case (let x?, let y?): return (x.lowercased(), a.feature) < (y.lowercased(), b.feature)
                case (.some, nil): return true
                case (nil, .some): return false
                default: return a.feature < b.feature
                }
            }
        }
        return ascending ? ordered : ordered.reversed()
    }

    package var selectedFeature: SAEFeatureIndex.Summary? {
        let sorted = sortedFeatures
        return featureList.selected < sorted.count ? sorted[featureList.selected] : nil
    }

    /// The training curve of the selected SAE: its stored log, then the points reported live.
    package var curve: [SAELogRow] {
        guard let model = selectedModel else { return [] }
        let stored = listing?.log ?? []
        let last = stored.last?.step ?? 0
        return stored + (live[model] ?? []).filter { $0.step > last }
    }

    /// Indexes the selected SAE's features once the tab has been shown, unless they are indexed at
    /// its current step or it is still training (its index would be stale in a moment).
    private mutating func loadFeatures() -> [PanelEffect] {
        guard wasShown, let listing, listing.step > 0, loadingFeatures == nil else { return [] }
        guard features == nil || featuresStep != listing.step else { return [] }
        if let last = live[listing.id]?.last, last.step < listing.steps { return [] }
        loadingFeatures = listing.id
        featuresStep = listing.step
        return [.ask(LoadFeatures(model: listing.id))]
    }

    private mutating func select(model: Int64) {
        guard model != selectedModel else { return }
        selectedModel = model
        features = nil
        card = nil
        test = nil
        featureList = ListState()
        loadingFeatures = nil
    }

    // MARK: - Messages

    /// The SAE port's answers; those for another SAE, card or text than the one awaited are dropped.
    private mutating func receive(_ answer: PortAnswer) -> [PanelEffect] {
        if let (_, listed) = answer.matching(ListSAEs.self) {
            switch listed {
            case .loaded(let found):
                listings = found
                error = nil
                if selectedModel == nil || listing == nil {
                    // The newest SAE that finished training, else the newest.
                    if let pick = found.last(where: \.finished) ?? found.last { select(model: pick.id) }
                }
                return loadFeatures()
            case .failed(let message):
                listings = []
                error = message
            }
        } else if let (asked, load) = answer.matching(LoadFeatures.self), asked.model == selectedModel {
            featuresLoaded(load)
        } else if let (asked, load) = answer.matching(LabelFeature.self), asked.model == selectedModel {
            featuresLoaded(load)
        } else if let (asked, load) = answer.matching(RefreshLabels.self), asked.model == selectedModel,
            case .loaded(let summaries) = load, features != nil
        {
            let labels = Dictionary(summaries.map { ($0.feature, $0.label) }, uniquingKeysWith: { a, _ in a })
            for j in features!.indices { features![j].label = labels[features![j].feature] ?? nil }
            if let open = card?.feature { card?.label = labels[open] ?? nil }
        } else if let (asked, load) = answer.matching(LoadCard.self),
            asked.model == selectedModel && asked.feature == loadingCard
        {
            loadingCard = nil
            switch load {
            case .loaded(let loaded):
                card = loaded
                if exportWhenLoaded {
                    exportWhenLoaded = false
                    return Self.export(loaded)
                }
            case .failed(let message): error = message
            }
        } else if let (asked, load) = answer.matching(Activate.self),
            asked.model == selectedModel && asked.text == loadingTest
        {
            loadingTest = nil
            switch load {
            case .loaded(let activations): test = activations
            case .failed(let message): error = message
            }
        }
        return []
    }

    private mutating func featuresLoaded(_ load: Load<[SAEFeatureIndex.Summary]>) {
        loadingFeatures = nil
        switch load {
        case .loaded(let summaries):
            features = summaries
            if let open = card?.feature { card?.label = summaries.first { $0.feature == open }?.label }
        case .failed(let message): error = message
        }
    }

    package mutating func receive(_ msg: Msg) -> [PanelEffect] {
        switch msg {
        case .answered(let answer):
            return receive(answer)
        case .jobProgress(_, let progress):
            guard let point = SAETrainingPoint(values: progress.values) else { return [] }
            let first = live[point.model] == nil
            live[point.model, default: []].append(point.log)
            if first {
                // A new run: follow it on the training view (unless a card is being read).
                if view != .card {
                    select(model: point.model)
                    view = .training
                }
                if listings?.contains(where: { $0.id == point.model }) != true { return [.ask(ListSAEs())] }
            }
        case .jobFinished:
            // A training run (or a collection) may have ended: read the stored SAEs again.
            return [.ask(ListSAEs())]
        case .workspaceChanged:
            // Another process committed (a teammate training or labelling on a shared workspace):
            // the SAEs again, and the labels of the features shown.
            var effects: [PanelEffect] = [.ask(ListSAEs())]
            if let model = selectedModel, features != nil, loadingFeatures == nil {
                effects.append(.ask(RefreshLabels(model: model)))
            }
            return effects
        case .input, .tick, .terminate, .fileWritten, .edited, .readFinished, .navigate, .listening, .unreachable: break
        }
        return []
    }

    // MARK: - Keys

    package mutating func handleText(_ key: Key) -> [PanelEffect] {
        switch key {
        case .escape:
            editing = nil
        case .enter:
            let field = editing
            editing = nil
            if field == .test { return runTest() }
            if field == .label, let model = selectedModel, let feature = card?.feature ?? selectedFeature?.feature {
                let label = labelInput.text.trimmingWhitespace()
                return [.ask(LabelFeature(model: model, feature: feature, label: label))]
            }
        default:
            if editing == .test { testInput.handle(key) } else { labelInput.handle(key) }
        }
        return []
    }

    private mutating func runTest() -> [PanelEffect] {
        let text = testInput.text.trimmingWhitespace()
        guard let model = selectedModel, !text.isEmpty else { return [] }
        loadingTest = text
        error = nil
        return [.ask(Activate(model: model, text: text))]
    }

    private mutating func openCard(_ feature: Int) -> [PanelEffect] {
        guard let model = selectedModel else { return [] }
        view = .card
        loadingCard = feature
        error = nil
        var effects: [PanelEffect] = [.ask(LoadCard(model: model, feature: feature))]
        // The test text is shaded by the open feature: run it once if it never ran.
        if test == nil, loadingTest == nil { effects += runTest() }
        return effects
    }

    package mutating func perform(_ action: PanelAction, area: Rect) -> [PanelEffect] {
        switch action {
        case .specific(let own): return perform(own.action(as: Action.self))
        case .down, .up, .pageDown, .pageUp, .top, .bottom:
            // Only the feature list moves; the card and the training curves fit their pane.
            guard view == .features else { return [] }
            featureList.navigate(action, count: sortedFeatures.count)
        case .open:
            guard view == .features, let feature = selectedFeature?.feature else { return [] }
            return openCard(feature)
        case .left, .right: break
        }
        return []
    }

    private mutating func perform(_ action: Action) -> [PanelEffect] {
        switch action {
        case .reload:
            return [.ask(ListSAEs())] + loadFeatures()
        case .model:
            guard let listings, !listings.isEmpty else { return [] }
            let index = listings.firstIndex { $0.id == selectedModel } ?? -1
            select(model: listings[(index + 1) % listings.count].id)
            if view == .card { view = .features }
            return loadFeatures()
        case .training:
            view = view == .training ? .features : .training
        case .train:
            guard let listing else { return [.editCommand("sae train --layer 3 --width 3072 --k 32 --steps 2000")] }
            if !listing.finished { return [.editCommand("sae train --resume \(listing.id)")] }
            let kind = listing.k.map { "--k \($0)" } ?? "--l1 \(String(format: "%g", listing.l1))"
            return [
                .editCommand(
                    "sae train --set \(listing.activationSet) --width \(listing.width) \(kind) --steps \(listing.steps)"
                )
            ]
        case .label:
            guard let feature = view == .card ? card?.feature : selectedFeature?.feature else { return [] }
            labelInput = LineEditor(features?.first { $0.feature == feature }?.label ?? "")
            labelInput.selectAll()
            editing = .label
        case .sort:
            if view == .card { return steer() }
            guard view == .features else { return [] }
            let all = Order.allCases
            order = all[(all.firstIndex(of: order)! + 1) % all.count]
            // Densities and activations read best largest first, labels and numbers ascending.
            ascending = order == .label || order == .feature
            featureList = ListState()
        case .hide:
            guard view == .features else { return [] }
            hidesDenseAndDead.toggle()
            featureList = ListState()
        case .reverse:
            guard view == .features else { return [] }
            ascending.toggle()
        case .next, .previous:
            guard view == .card else { return [] }
            featureList.move(by: action == .next ? 1 : -1, count: sortedFeatures.count)
            if let feature = selectedFeature?.feature { return openCard(feature) }
        case .test:
            guard view == .card else { return [] }
            editing = .test
            testInput.selectAll()
        case .export:
            switch view {
            case .card: return card.map(Self.export) ?? []
            case .features:
                // The card is built first, then written.
                if let feature = selectedFeature?.feature {
                    exportWhenLoaded = true
                    return openCard(feature)
                }
            case .training: break
            }
        }
        return []
    }

    /// True when the selected SAE reads SmolLM2's stream (byte-level BPE pieces, steerable).
    package var readsLanguageModel: Bool { listing?.source == SAEService.languageModelName }

    /// The model whose stream the selected SAE reads, as the panel names it.
    package var sourceName: String { readsLanguageModel ? "SmolLM2" : "MiniLM" }

    /// The : line with `sae steer` for the open card's feature, its α four times the feature's
    /// largest activation (a push well past anything it reached on the corpus), the prompt to type.
    private mutating func steer() -> [PanelEffect] {
        guard let listing, let card else { return [] }
        guard readsLanguageModel else {
            error =
                "steering needs an SAE on SmolLM2's stream: sae collect --model smollm2, then sae train --model smollm2"
            return []
        }
        let alpha = Self.steeringAlpha(maxActivation: card.maxActivation)
        return [.editCommand("sae steer \(listing.id) \(card.feature) --alpha \(alpha) ")]
    }

    /// Four times `maxActivation`, to one decimal (8 when the feature never fired).
    static func steeringAlpha(maxActivation: Float) -> String {
        String(format: "%.1f", maxActivation > 0 ? 4 * maxActivation : 8)
    }

    /// Writes `card` to `sae-<id>-feature-<n>.json` in the working directory; a card that does
    /// not encode (a value JSON cannot hold, such as a NaN) says so on the status line.
    static func export(_ card: SAEFeatureIndex.Card) -> [PanelEffect] {
        let json: String
        do { json = try card.json() } catch {
            return [.status("✗ feature \(card.feature) was not exported: \(error)", .error)]
        }
        let path = FileManager.default.currentDirectoryPath + "/sae-\(card.model)-feature-\(card.feature).json"
        return [.app(.writeFile(path: path, contents: json + "\n"))]
    }

    package mutating func search(_ query: String, forward: Bool, includeCurrent: Bool) -> Bool {
        let texts = sortedFeatures.map { "feature \($0.feature) \($0.label ?? "")" }
        return featureList.selectNextMatch(
            in: texts, query: query, forward: forward, includeCurrent: includeCurrent)
    }
}
