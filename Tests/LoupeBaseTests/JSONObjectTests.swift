import LoupeBase
import Testing

/// `JSONObject` keeps members in an array, sorted; a dictionary is what it must behave as.
@Suite struct JSONObjectTests {
    /// Names from a small alphabet, so that random objects repeat names, and some non-ASCII.
    private static func name(_ random: inout SplitMix64) -> String {
        let letters = ["a", "b", "B", "é", "z", "_", "0", "gen_ai.", "ü"]
        return (0..<Int(random.next() % 3 + 1)).map { _ in letters[Int(random.next() % UInt64(letters.count))] }
            .joined()
    }

    @Test(arguments: [0, 1, 3, 8, 9, 40])
    func behavesAsADictionaryOfTheSameMembers(size: Int) throws {
        var random = SplitMix64(seed: UInt64(size) + 7)
        for _ in 0..<50 {
            let members = (0..<size).map { i in (Self.name(&random), JSONValue.number(Double(i))) }
            // A dictionary keeps the last of a name given twice, as a parser does.
            var model: [String: JSONValue] = [:]
            for (key, value) in members { model[key] = value }
            var object = JSONObject(members)
            #expect(object.count == model.count)
            #expect(object.keys == model.keys.sorted())
            #expect(object.dictionary == model)
            #expect(object == JSONObject(model))
            #expect(object.hashValue == JSONObject(model).hashValue)
            for key in model.keys { #expect(object[key] == model[key]) }
            #expect(object["absent"] == nil)
            // Written as the dictionary was before: keys sorted.
            let parsed = try JSONValue.parse(JSONValue.object(object).compactJSON)
            #expect(parsed == .object(object))

            // Setting, replacing and removing keep the order and the dictionary's contents.
            for _ in 0..<20 {
                let key = Self.name(&random)
                switch random.next() % 3 {
                case 0:
                    object[key] = .string(key)
                    model[key] = .string(key)
                case 1:
                    #expect(object.removeValue(forKey: key) == model.removeValue(forKey: key))
                default:
                    object[key] = nil
                    model[key] = nil
                }
                #expect(object.keys == model.keys.sorted())
                #expect(object.dictionary == model)
            }
        }
    }

    @Test func aParsedObjectKeepsTheLastOfANameGivenTwice() throws {
        let value = try JSONValue.parse(#"{"b": 1, "a": 2, "b": 3, "c": 4, "a": 5}"#)
        #expect(value.compactJSON == #"{"a":5,"b":3,"c":4}"#)
        #expect(value["b"] == .number(3))
    }

    @Test func equalityAndHashIgnoreTheOrderWritten() throws {
        let one = try JSONValue.parse(#"{"x": {"p": 1, "q": [true]}, "y": null}"#)
        let other = try JSONValue.parse(#"{"y": null, "x": {"q": [true], "p": 1}}"#)
        #expect(one == other)
        #expect(one.hashValue == other.hashValue)
        #expect(one != (try JSONValue.parse(#"{"y": null, "x": {"q": [true], "p": 2}}"#)))
    }

    @Test func mergingAndFilteringStayObjects() {
        let a: JSONObject = ["k": .number(1), "m": .number(2)]
        let b: JSONObject = ["m": .number(3), "n": .number(4)]
        #expect(a.merging(b) { current, _ in current } == ["k": .number(1), "m": .number(2), "n": .number(4)])
        #expect(a.merging(b) { _, new in new } == ["k": .number(1), "m": .number(3), "n": .number(4)])
        #expect(b.filter { $0.key != "m" } == ["n": .number(4)])
        #expect(a.mapValues { .string($0.compactJSON) } == ["k": "1", "m": "2"])
    }
}
