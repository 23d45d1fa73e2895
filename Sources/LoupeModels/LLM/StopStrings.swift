import Foundation

/// Stop strings over text that arrives a token at a time.
///
/// Text is released as soon as it can no longer be the start of a stop string, so a stream never
/// shows part of a stop string that then completes (llama-server holds back the same way). When
/// a stop string completes, the text before it is released and the rest is dropped.
package struct StopStrings: Sendable {
    package let stops: [String]
    private var pending = ""

    package init(_ stops: [String]) { self.stops = stops.filter { !$0.isEmpty } }

    /// What `text` releases, and the stop string it completed, if any (then nothing more comes).
    package mutating func feed(_ text: String) -> (released: String, stop: String?) {
        pending += text
        // The earliest complete stop string wins; among those starting at the same place, the longest.
        var earliest: (range: Range<String.Index>, stop: String)?
        for stop in stops {
            guard let range = pending.range(of: stop) else { continue }
            if let current = earliest,
                current.range.lowerBound < range.lowerBound
                    || (current.range.lowerBound == range.lowerBound && current.stop.count >= stop.count)
            {
                continue
            }
            earliest = (range, stop)
        }
        if let earliest {
            let released = String(pending[..<earliest.range.lowerBound])
            pending = ""
            return (released, earliest.stop)
        }
        // Hold back the longest tail that is a proper prefix of some stop string.
        var held = 0
        for stop in stops {
            for length in stride(from: min(stop.count - 1, pending.count), to: 0, by: -1)
            where length > held && pending.hasSuffix(stop.prefix(length)) {
                held = length
                break
            }
        }
        let cut = pending.index(pending.endIndex, offsetBy: -held)
        let released = String(pending[..<cut])
        pending = String(pending[cut...])
        return (released, nil)
    }

    /// The text held back at the end of generation (no stop string completed it).
    package mutating func finish() -> String {
        defer { pending = "" }
        return pending
    }
}
