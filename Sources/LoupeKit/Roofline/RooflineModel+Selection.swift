import Foundation
import LoupeBase

/// The profile and precision a roofline is shown at, chosen by one rule for every door: the
/// Roofline panel (`p`, `f`), `loupe roofline show|kernels|export --profile --precision` and the
/// MCP tool `roofline_kernels`.
extension RooflineModel {
    /// A profile, where it stands in ``profiles`` (0-based), and the precision to place its kernels at.
    package struct Selection: Hashable, Sendable {
        package var index: Int
        package var profile: Profile
        package var precision: String
    }

    /// A profile that could not be chosen: what a user asked for and why it names none.
    package struct SelectionError: UserFacingError, Hashable, Sendable {
        package enum Reason: Hashable, Sendable {
            /// The workspace holds no machine profile at all.
            case noProfiles
            /// A number past the last profile.
            case noSuchNumber(Int, count: Int)
            /// A name no profile's contains.
            case noMatch(String, names: [String])
        }

        package var reason: Reason
        /// How the caller's argument is named in the message (`--profile`, `roofline_kernels: profile`).
        package var argument: String

        package var description: String {
            switch reason {
            case .noProfiles:
                "no machine profile in this workspace: run `loupe roofline measure` or `loupe roofline import-ncu`"
            case .noSuchNumber(let number, let count):
                "\(argument) \(number): the workspace has \(count) profiles"
            case .noMatch(let asked, let names):
                UntrustedText.sanitized(
                    "\(argument) \(asked.prefix(60)): none of \(names.joined(separator: "; ")) matches")
            }
        }
    }

    /// The precision shown when there is no profile to ask.
    package static let defaultPrecision = "FP32"

    /// The profile at `index` (0-based), the last when past the end; nil when there is none.
    package func profile(at index: Int) -> Profile? {
        profiles.isEmpty ? nil : profiles[min(max(index, 0), profiles.count - 1)]
    }

    /// The profile `asked` names and the precision `precision` names on it.
    ///
    /// - Parameters:
    ///   - asked: a 1-based number in ``profiles`` or a piece of a profile's name, matched without
    ///     case (the first that contains it); nil is the first profile.
    ///   - precision: see ``Profile/precision(named:)``.
    ///   - argument: how the caller names `asked` in an error (`--profile`).
    /// - Throws: ``SelectionError`` when the workspace has no profile or `asked` names none.
    package func select(profile asked: String?, precision: String?, argument: String = "profile")
        throws(SelectionError) -> Selection
    {
        guard !profiles.isEmpty else { throw SelectionError(reason: .noProfiles, argument: argument) }
        let index: Int
        let asked = asked ?? "1"
        if let number = Int(asked) {
            guard (1...profiles.count).contains(number) else {
                throw SelectionError(reason: .noSuchNumber(number, count: profiles.count), argument: argument)
            }
            index = number - 1
        } else {
            guard let match = profiles.firstIndex(where: { $0.name.localizedCaseInsensitiveContains(asked) }) else {
                throw SelectionError(reason: .noMatch(asked, names: profiles.map(\.name)), argument: argument)
            }
            index = match
        }
        let profile = profiles[index]
        return Selection(index: index, profile: profile, precision: profile.precision(named: precision))
    }
}

extension RooflineModel.Profile {
    /// The precision `asked` names, as this profile spells it (`Tensor` is not upper case) when one
    /// of its ``precisions`` matches without case, else upper-cased (a precision with no roof or
    /// kernel here places nothing, which the result then says); the profile's first when nil.
    package func precision(named asked: String?) -> String {
        guard let asked else { return precisions.first ?? RooflineModel.defaultPrecision }
        return precisions.first { $0.caseInsensitiveCompare(asked) == .orderedSame } ?? asked.uppercased()
    }

    /// The precision the panel's `f` has stepped to: the `index`th of ``precisions``, the last when
    /// past the end.
    package func precision(at index: Int) -> String {
        let precisions = self.precisions
        return precisions.isEmpty
            ? RooflineModel.defaultPrecision : precisions[min(max(index, 0), precisions.count - 1)]
    }
}
