import Foundation
import Testing

@testable import LoupeModels

/// A model's files that cannot be read say why (missing, a directory, not UTF-8), naming the file,
/// instead of one "cannot be read as UTF-8 text" for every cause.
struct ModelFileErrorTests {
    private let directory = NSTemporaryDirectory() + "loupe-model-files-\(UUID().uuidString)"

    @Test func aMissingVocabularyIsSaidToBeMissing() {
        let error = #expect(throws: ModelError.self) {
            try WordPieceTokenizer(vocabularyFile: directory + "/vocab.txt")
        }
        #expect(error?.description.contains("vocab.txt") == true)
        #expect(error?.description.contains("no such file") == true)
    }

    @Test func aVocabularyThatIsADirectoryIsSaidToBeOne() throws {
        try FileManager.default.createDirectory(atPath: directory + "/vocab.txt", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let error = #expect(throws: ModelError.self) {
            try WordPieceTokenizer(vocabularyFile: directory + "/vocab.txt")
        }
        #expect(error?.description.contains("is a directory") == true)
    }

    @Test func aVocabularyInLatin1NamesTheFirstBadByte() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/vocab.txt"
        try Data("[PAD]\ncaf".utf8 + [0xE9] + Data("\n".utf8)).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: ModelError.self) { try WordPieceTokenizer(vocabularyFile: path) }
        #expect(error?.description.contains("invalid byte at offset 9") == true)
    }

    @Test func aMissingConfigurationIsSaidToBeMissing() {
        let error = #expect(throws: ModelError.self) { try BertConfiguration(file: directory + "/config.json") }
        #expect(error?.description.contains("config.json") == true)
        #expect(error?.description.contains("no such file") == true)
    }

    /// Weights are mapped, not read, but say the same: missing, a directory, or too short (an
    /// empty file was mapped before, which Foundation cannot do and leaked a buffer for).
    @Test func weightsThatCannotBeMappedSayWhy() throws {
        try FileManager.default.createDirectory(
            atPath: directory + "/dir.safetensors", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        FileManager.default.createFile(atPath: directory + "/empty.safetensors", contents: Data())
        let cases = [
            ("missing.safetensors", "missing.safetensors: no such file"),
            ("dir.safetensors", "dir.safetensors: is a directory"),
            ("empty.safetensors", "empty.safetensors: is 0 bytes, too short for a safetensors header"),
        ]
        for (file, message) in cases {
            let error = #expect(throws: ModelError.self) { try SafeTensors(path: directory + "/" + file) }
            #expect(error?.description.hasPrefix(message) == true, "\(error?.description ?? "")")
        }
    }
}
