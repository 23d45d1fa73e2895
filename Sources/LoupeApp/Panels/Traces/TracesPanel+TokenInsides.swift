import Foundation
import LoupeBase
import LoupeKit
import LoupeTUI

extension TracesPanel {
    /// What the token view opens over itself at its cursor token: SmolLM2's attention (`a`), its
    /// logit lens (`l`) or the SAE features active (`x`) there.
    package enum TokenInside: Sendable {
        case attention(TokenAttentionView)
        case lens(TokenLensView)
        case features(TokenFeaturesView)

        /// The generated token it was read at (its index in the step).
        package var token: Int {
            switch self {
            case .attention(let view): view.attention.context.token
            case .lens(let view): view.lens.context.token
            case .features(let view): view.features.token
            }
        }

        package var kind: Kind {
            switch self {
            case .attention: .attention
            case .lens: .lens
            case .features: .features
            }
        }

        /// Which of the three.
        package enum Kind: Hashable, Sendable {
            case attention, lens, features
        }

        mutating func perform(_ action: PanelAction) {
            switch self {
            case .attention(var view):
                view.perform(action)
                self = .attention(view)
            case .lens(var view):
                view.perform(action)
                self = .lens(view)
            case .features(var view):
                view.perform(action)
                self = .features(view)
            }
        }

        func render(into frame: inout Frame, area: Rect, theme: Theme) {
            switch self {
            case .attention(let view): view.render(into: &frame, area: area, theme: theme)
            case .lens(let view): view.render(into: &frame, area: area, theme: theme)
            case .features(let view): view.render(into: &frame, area: area, theme: theme)
            }
        }
    }

    /// A probability as the attention and lens views print it: three decimals, or two
    /// significant digits below 0.001 (a token the grammar forced can be that unlikely).
    static func probabilityText(_ p: Double) -> String {
        p >= 0.001 || p == 0 ? String(format: "%.3f", p) : String(format: "%.1e", p)
    }

    /// A generated token of a local model's step: trace, span ordinal and token index.
    package struct TokenAddress: Hashable, Sendable {
        package var trace: Int64
        package var span: Int
        package var token: Int

        package init(trace: Int64, span: Int, token: Int) {
            self.trace = trace
            self.span = span
            self.token = token
        }

        /// As the commands take it.
        var selectors: String { "--trace \(trace) --span \(span) --token \(token)" }
    }

    /// SmolLM2's attention where a token was chosen (`a`): a teacher-forced pass over the step's
    /// context, seconds on a long one, so it runs as a job.
    package struct TokenAttentionAt: PortRequest {
        package var address: TokenAddress

        package init(_ address: TokenAddress) { self.address = address }

        package var jobTitle: String? { "SmolLM2's attention at token #\(address.token)" }

        package func ask(_ port: TokenInsidesBrowser) throws -> TokenAttention {
            try port.attention(trace: address.trace, span: address.span, token: address.token)
        }
    }

    /// The logit lens where a token was chosen (`l`).
    package struct TokenLensAt: PortRequest {
        package var address: TokenAddress

        package init(_ address: TokenAddress) { self.address = address }

        package var jobTitle: String? { "the logit lens at token #\(address.token)" }

        package func ask(_ port: TokenInsidesBrowser) throws -> TokenLens {
            try port.lens(trace: address.trace, span: address.span, token: address.token)
        }
    }

    /// The SAE features active where a token was chosen (`x`): SmolLM2 reads the step's context
    /// and the newest SmolLM2 SAE encodes the stream after its layer, seconds on a long step.
    package struct TokenFeaturesAt: PortRequest {
        package var address: TokenAddress

        package init(_ address: TokenAddress) { self.address = address }

        package var jobTitle: String? { "the SAE features at token #\(address.token)" }

        package func ask(_ port: SAEBrowser) throws -> TokenFeatures {
            try port.tokenFeatures(trace: address.trace, span: address.span, token: address.token)
        }
    }
}
