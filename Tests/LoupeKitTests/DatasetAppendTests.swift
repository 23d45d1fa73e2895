import Foundation
import LoupeKit
import LoupeStore
import Testing

/// `dataset add` appends to the file the dataset is, in place: a symlink's target gets the item,
/// and a read-only dataset is refused and left as it was.
@Suite struct DatasetAppendTests {
    private static let firstLine = #"{"id":"a","input":"x","target":"y"}"#

    /// A workspace with the sample Inspect log's run, its service, and an answer to keep.
    private func fixture() throws -> (EvalService, EvalService.DatasetSource, String) {
        let workspace = try KitFixtures.workspace("dataset-append")
        _ = try TraceService(workspace: workspace).importFiles([
            KitFixtures.path("sample-data/traces/inspect-arith.eval")
        ])
        let run = try #require(try workspace.evals.evalRuns().first?.id)
        return (
            EvalService(workspace: workspace), .answer(run: run, item: "q2", epoch: 1),
            try KitFixtures.temporaryDirectory("dataset-append-files")
        )
    }

    @Test func aSymlinkedDatasetsTargetGetsTheItemAndTheLinkStays() throws {
        let (service, source, directory) = try fixture()
        let target = directory + "/v3.jsonl"
        let link = directory + "/current.jsonl"
        // No newline at the end: the item still goes on a line of its own.
        try Self.firstLine.write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "v3.jsonl")

        let added = try service.addToDataset(link, from: source, expected: nil, id: nil, suite: nil, like: nil)
        #expect(added.line == 2)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "v3.jsonl")
        let lines = try String(contentsOfFile: target, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2 && lines[0] == Self.firstLine && lines[1].contains(#""id":"q2""#), "\(lines)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["current.jsonl", "v3.jsonl"])
    }

    @Test func aReadOnlyDatasetIsRefusedByNameAndLeftAsItWas() throws {
        let (service, source, directory) = try fixture()
        let dataset = directory + "/frozen.jsonl"
        try (Self.firstLine + "\n").write(toFile: dataset, atomically: false, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: dataset)
        let before = try FileManager.default.attributesOfItem(atPath: dataset)

        let error = try #require(throws: EvalError.self) {
            try service.addToDataset(dataset, from: source, expected: nil, id: nil, suite: nil, like: nil)
        }
        #expect("\(error)".contains(dataset) && "\(error)".contains("read-only"), "\(error)")
        let after = try FileManager.default.attributesOfItem(atPath: dataset)
        #expect(try String(contentsOfFile: dataset, encoding: .utf8) == Self.firstLine + "\n")
        #expect(after[.posixPermissions] as? Int == 0o444)
        #expect(after[.systemFileNumber] as? Int == before[.systemFileNumber] as? Int, "the file was replaced")
    }
}
