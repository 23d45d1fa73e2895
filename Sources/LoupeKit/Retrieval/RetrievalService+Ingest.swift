import Foundation
import LoupeBase
import LoupeModels
import LoupeRetrieval
import LoupeStore

extension RetrievalService {
    /// Files under `paths` (directories are walked for .jsonl, .md and .txt), sorted.
    package static func files(_ paths: [String]) throws(RetrievalError) -> [String] {
        var result: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw RetrievalError("\(path): no such file or directory")
            }
            if isDirectory.boolValue {
                let found = (FileManager.default.subpaths(atPath: path) ?? []).filter {
                    let lower = $0.lowercased()
                    return [".jsonl", ".ndjson", ".md", ".markdown", ".txt"].contains { lower.hasSuffix($0) }
                }.sorted().map { (path as NSString).appendingPathComponent($0) }
                result += found
            } else {
                result.append(path)
            }
        }
        return result
    }

    /// The default chunker for a format: JSONL records are passages already.
    package static func defaultChunker(_ format: CorpusReader.Format) -> Chunker {
        switch format {
        case .jsonl: return .document
        case .markdown: return .markdown(maxWords: 200)
        case .text: return .words(size: 200, overlap: 40)
        }
    }

    /// Reads, chunks and stores each file (one transaction per file, skipped when its bytes
    /// and chunker are unchanged), then embeds chunks that have no embedding yet. With `strict`
    /// every file is read and parsed first, and the first file or line that cannot be read
    /// throws (naming file:line) before anything is stored: all or nothing.
    ///
    /// - Parameter precision: the precision to embed the corpus at from now on (queries too);
    ///   chunks embedded at the other one are embedded again. Nil keeps the corpus's.
    package func ingest(
        _ paths: [String], chunker override: Chunker? = nil, strict: Bool = false, embed: Bool = true,
        precision: Precision? = nil, reporter: JobReporter = .detached()
    ) throws -> IngestReport {
        var report = IngestReport()
        let files = try Self.files(paths)
        if strict { try Self.check(files, reporter: reporter) }
        if let precision, precision != (try self.precision()) {
            try settings.setSetting(Self.precisionSetting, to: precision.rawValue)
        }
        for (index, file) in files.enumerated() {
            try reporter.checkCancellation()
            reporter.report(
                JobProgress(
                    completed: Double(index), total: Double(files.count), detail: (file as NSString).lastPathComponent))
            report.files += 1
            // Within the input limit, and never a pipe or device (`InputFile`); why not, said.
            let data: Data
            do { data = Data(try TextFile.bytes(file)) } catch {
                report.warnings.append("\(error), skipped")
                report.skippedFiles += 1
                continue
            }
            let text: String
            do {
                text = try CorpusReader.text(data, file: file)
            } catch {
                report.warnings.append(error.description)
                report.skippedFiles += 1
                continue
            }
            let format = CorpusReader.Format.of(path: file)
            let chunker = override ?? Self.defaultChunker(format)
            let chunkerJSON = String(decoding: try JSONEncoder().encode(chunker), as: UTF8.self)
            let hash = SHA256.hex(data) + ":" + chunkerJSON
            let key = URL(fileURLWithPath: file).standardizedFileURL.path
            if try corpus.sourceHash(path: key) == hash {
                report.unchanged += 1
                continue
            }
            var documents: [CorpusDocument]
            switch format {
            case .jsonl:
                let parsed = try CorpusReader.jsonl(text, file: file, strict: strict)
                documents = parsed.documents
                report.warnings += parsed.warnings
                report.skippedLines += parsed.warnings.count
            case .markdown, .text:
                let title =
                    text.split(separator: "\n").first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.map {
                        String($0.drop { $0 == "#" || $0 == " " })
                    } ?? ""
                documents = [CorpusDocument(id: (file as NSString).lastPathComponent, title: "", text: text)]
                documents[0].title = title
            }
            let stored = documents.map { document in
                let bytes = Array(document.body.utf8)
                return IngestDocument(
                    externalID: document.id, title: document.title, body: document.body,
                    chunks: chunker.ranges(document.body).map {
                        IngestDocument.Chunk(
                            startByte: $0.lowerBound, endByte: $0.upperBound,
                            text: String(decoding: bytes[$0], as: UTF8.self))
                    })
            }
            try corpus.replaceSource(
                path: key, hash: hash, format: format.rawValue, chunkerJSON: chunkerJSON, documents: stored)
            report.documents += stored.count
            report.chunks += stored.reduce(0) { $0 + $1.chunks.count }
        }
        if embed { report.embedded = try embedMissing(reporter: reporter) }
        return report
    }

    /// `ingest --strict`'s first pass: reads and parses every file as the ingest will, and
    /// throws at the first that cannot be read or the first malformed line, before anything is
    /// stored. Each file is read again when it is stored, so memory holds one file at a time.
    private static func check(_ files: [String], reporter: JobReporter) throws {
        for (index, file) in files.enumerated() {
            try reporter.checkCancellation()
            reporter.report(
                JobProgress(
                    completed: Double(index), total: Double(files.count),
                    detail: "checking " + (file as NSString).lastPathComponent))
            let data: Data
            do { data = Data(try TextFile.bytes(file)) } catch {
                throw RetrievalError("\(error); nothing was stored (--strict)")
            }
            let text: String
            do {
                text = try CorpusReader.text(data, file: file)
            } catch {
                throw RetrievalError("\(error.description); nothing was stored (--strict)")
            }
            if CorpusReader.Format.of(path: file) == .jsonl {
                do {
                    _ = try CorpusReader.jsonl(text, file: file, strict: true)
                } catch {
                    throw RetrievalError("\(error.description); nothing was stored (--strict)")
                }
            }
        }
    }

    /// Embeds every chunk without a MiniLM embedding, storing each batch as it is done.
    @discardableResult
    package func embedMissing(reporter: JobReporter = .detached()) throws -> Int {
        let precision = try precision()
        let model = Self.embeddingModel(precision)
        let missing = try corpus.chunksWithoutEmbedding(model: model)
        guard !missing.isEmpty else { return 0 }
        let embedder = try models.miniLM(precision: precision)
        let batch = 128
        var done = 0
        for start in stride(from: 0, to: missing.count, by: batch) {
            try reporter.checkCancellation()
            reporter.report(
                JobProgress(completed: Double(done), total: Double(missing.count), detail: "embedding chunks"))
            let slice = Array(missing[start..<min(missing.count, start + batch)])
            let vectors = embedder.embed(slice.map(\.text)).map(\.vector)
            try corpus.storeEmbeddings(zip(slice, vectors).map { ($0.id, $1) }, model: model)
            done += slice.count
        }
        return done
    }
}
