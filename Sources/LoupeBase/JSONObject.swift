/// A JSON object's members, kept in the order `compactJSON` writes them: by name, as `String`'s
/// `<` sorts, each name once (the last of a name given twice wins, as a dictionary keeps it).
///
/// An array, not a dictionary: the objects a trace holds are small (an OTLP attribute has two
/// members, its value one), and hashing every name with a seeded SipHash to build a table, then
/// sorting the names again to write them out, was a fifth of a trace import. Built from members
/// already in order (what Loupe's own writer gives), it is one pass over them; a name is found by a
/// scan, or a binary search in a large object.
package struct JSONObject: Hashable, Sendable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    package typealias Element = (key: String, value: JSONValue)

    private var members: [Element]

    package init() { members = [] }

    /// Members in any order; of a name given twice, the last is kept.
    package init(_ members: some Sequence<(String, JSONValue)>) {
        self.members = members.map { (key: $0.0, value: $0.1) }
        normalize()
    }

    package init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { (key: $0.key, value: $0.value) }
        members.sort { $0.key < $1.key }
    }

    package init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    /// Members as parsed, in the order written; sorted here unless they already are.
    package init(parsed members: [Element]) {
        self.members = members
        normalize()
    }

    /// Sorts by name, stably, then keeps the last member of each name.
    private mutating func normalize() {
        var sorted = true
        for i in members.indices.dropFirst() where !(members[i - 1].key < members[i].key) {
            sorted = false
            break
        }
        guard !sorted else { return }
        // Swift's sort is stable: of equal names the later stays later, so the pass below keeps it.
        members.sort { $0.key < $1.key }
        // Of equal names, the last given is kept.
        var kept = 0
        for i in members.indices {
            if kept > 0, members[kept - 1].key == members[i].key {
                members.swapAt(kept - 1, i)
            } else {
                members.swapAt(kept, i)
                kept += 1
            }
        }
        members.removeLast(members.count - kept)
    }

    package var startIndex: Int { 0 }
    package var endIndex: Int { members.count }
    package subscript(position: Int) -> Element { members[position] }

    /// Where `key` is, or where it would go.
    private func position(of key: String) -> (index: Int, found: Bool) {
        if members.count <= 8 {
            for (i, member) in members.enumerated() {
                if member.key == key { return (i, true) }
                if key < member.key { return (i, false) }
            }
            return (members.count, false)
        }
        var low = 0
        var high = members.count
        while low < high {
            let middle = (low + high) / 2
            if members[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return (low, low < members.count && members[low].key == key)
    }

    package subscript(key: String) -> JSONValue? {
        get {
            // Small objects (most of them) are scanned for an equal name without ordering.
            if members.count <= 8 {
                for member in members where member.key == key { return member.value }
                return nil
            }
            let (index, found) = position(of: key)
            return found ? members[index].value : nil
        }
        set {
            let (index, found) = position(of: key)
            switch (found, newValue) {
            case (true, let value?): members[index].value = value
            case (true, nil): members.remove(at: index)
            case (false, let value?): members.insert((key, value), at: index)
            case (false, nil): break
            }
        }
    }

    package subscript(key: String, default value: @autoclosure () -> JSONValue) -> JSONValue {
        get { self[key] ?? value() }
        set { self[key] = newValue }
    }

    package var keys: [String] { members.map(\.key) }
    package var values: [JSONValue] { members.map(\.value) }

    @discardableResult
    package mutating func removeValue(forKey key: String) -> JSONValue? {
        let (index, found) = position(of: key)
        return found ? members.remove(at: index).value : nil
    }

    /// The same names, each value transformed.
    package func mapValues(_ transform: (JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var copy = self
        for i in copy.members.indices { copy.members[i].value = try transform(copy.members[i].value) }
        return copy
    }

    /// The members `isIncluded` keeps, still an object.
    package func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> JSONObject {
        var copy = JSONObject()
        copy.members = try members.filter(isIncluded)
        return copy
    }

    /// These members and `other`'s; for a name in both, `combine` picks the value.
    package func merging(
        _ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue
    ) rethrows -> JSONObject {
        var merged = self
        for member in other.members {
            merged[member.key] = try self[member.key].map { try combine($0, member.value) } ?? member.value
        }
        return merged
    }

    /// As a dictionary, for code that builds or merges by name.
    package var dictionary: [String: JSONValue] {
        Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    package static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.count == b.members.count
            && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
