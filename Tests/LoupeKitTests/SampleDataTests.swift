import Foundation
import Testing

/// `sample-data/` works on its own: a copy of it without `Tests/` still has every file the
/// notebooks read (profiles.md failed on every cell when its traces were links into `Tests/`).
@Suite struct SampleDataTests {
    @Test func noLinkLeavesSampleData() throws {
        let root = KitFixtures.path("sample-data")
        let enumerator = try #require(FileManager.default.enumerator(atPath: root))
        var leaving: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let path = root + "/" + relative
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) else { continue }
            // An absolute link breaks in a copy wherever it points; a relative one must stay inside.
            if target.hasPrefix("/") || !Self.staysInside(relative, target: target) {
                leaving.append(relative + " → " + target)
            }
        }
        #expect(leaving.isEmpty, "links out of sample-data/: \(leaving)")
        #expect(FileManager.default.fileExists(atPath: root + "/profiles/alexnet-a100"))
    }

    /// Whether a link at `relative` (a path inside the folder) to the relative `target` points
    /// inside the folder, `..` counted component by component.
    static func staysInside(_ relative: String, target: String) -> Bool {
        var components = relative.split(separator: "/").dropLast().map(String.init)
        for component in target.split(separator: "/") {
            switch component {
            case ".": continue
            case "..":
                guard !components.isEmpty else { return false }
                components.removeLast()
            default: components.append(String(component))
            }
        }
        return true
    }

    @Test func aLinkIsInsideOnlyWhileItsDotDotsStayInside() {
        #expect(Self.staysInside("profiles/alexnet-a100", target: "../traces/a.json"))
        #expect(!Self.staysInside("profiles/alexnet-a100", target: "../../Tests/Fixtures/kineto/alexnet-a100"))
        #expect(!Self.staysInside("profiles/x", target: "a/../../../y"))
    }
}
