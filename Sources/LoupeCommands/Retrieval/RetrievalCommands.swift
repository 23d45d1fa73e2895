import ArgumentParser
import Foundation
import LoupeBase
import LoupeKit
import LoupeModels
import LoupeRetrieval
import LoupeStore

extension RetrievalService {
    /// The service on the command's workspace.
    static func on(_ context: CommandContext) throws -> RetrievalService {
        RetrievalService(database: try context.database(), models: context.session.models)
    }
}

/// `loupe ingest PATH…`: documents and chunks into the workspace.
struct IngestCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "ingest",
        abstract: "Ingest JSONL, Markdown and text files (or folders) as documents and chunks, and embed the chunks.",
        discussion: """
            JSONL lines are {"id", "title", "text", ...}: each record is a document and, by default, \
            one chunk. Markdown is cut at headings and paragraphs (200 words at most), text into \
            200-word windows overlapping by 40. Every chunk keeps its document and byte offsets. A file \
            whose bytes and chunker are unchanged is skipped; a changed one replaces its chunks in one \
            transaction. Binary and invalid UTF-8 files are skipped with a warning; malformed JSONL \
            lines are reported by line and skipped, and the command then exits with status 2 after \
            saying how many it skipped. With --strict nothing is stored unless every file and line \
            reads; the error names the first file:line that does not.
            """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var input: InputOptions
    @Argument(help: ArgumentHelp("Files or folders.", valueName: "path")) var paths: [String]
    @Option(help: "Cut every document into windows of this many words (0: whole documents).") var chunkWords: Int?
    @Option(help: "Words shared by consecutive windows.") var overlap = 40
    @Flag(help: "All or nothing: store nothing if any file or JSONL line cannot be read.") var strict = false
    @Flag(help: "Do not compute embeddings now (search computes missing ones).") var noEmbed = false
    @Option(
        help: """
            Embed the corpus, and from then on its queries, at this precision: fp32, or int8 (about 3x faster, \
            cosine to fp32 ≥ 0.999); chunks embedded at the other are embedded again. Default: the corpus's.
            """)
    var precision: Precision?
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give at least one file or folder, e.g. loupe ingest corpus.jsonl") }
        if let chunkWords, chunkWords < 0 { throw ValidationError("--chunk-words must be 0 or more") }
    }

    func run(in context: CommandContext) throws {
        let chunker: Chunker? = chunkWords.map { $0 == 0 ? .document : .words(size: $0, overlap: overlap) }
        let started = Date()
        let service = try RetrievalService.on(context)
        // Each file is its own transaction (without --strict): those stored before a signal stay.
        let report = try Interrupt.importing(
            context, "corpus files",
            kept: "the files stored before it are kept; run the same command again for the rest"
        ) {
            try service.ingest(
                paths, chunker: chunker, strict: strict, embed: !noEmbed, precision: precision,
                reporter: context.reporter)
        }
        if json {
            context.print(try Formatting.json(report))
            try Self.failIfSkipped(report)
            return
        }
        for warning in report.warnings { context.print("warning: " + warning) }
        context.print(
            "\(Formatting.count(report.files, "file")): \(report.unchanged) unchanged, "
                + "\(Formatting.count(report.documents, "document")) and \(Formatting.count(report.chunks, "chunk")) stored, "
                + "\(Formatting.count(report.embedded, "chunk")) embedded"
                + String(format: " in %.1f s", Date().timeIntervalSince(started)))
        let database = try context.database()
        let counts = try CorpusTables(database).corpusCounts(model: try RetrievalService.embeddingModel(of: database))
        context.print(
            "workspace corpus: \(Formatting.count(counts.documents, "document")), \(Formatting.count(counts.chunks, "chunk")), \(counts.embedded) embedded"
                + (counts.embedded > 0 ? " at \(try RetrievalService.precision(of: database).rawValue)" : "")
        )
        try Self.failIfSkipped(report)
    }

    /// What was stored stays, but an ingest that left input out is not a success: it ends with
    /// the count (the last line a user or a script sees) and status 2, "partial".
    static func failIfSkipped(_ report: RetrievalService.IngestReport) throws {
        guard report.skippedLines > 0 || report.skippedFiles > 0 else { return }
        var parts: [String] = []
        if report.skippedLines > 0 { parts.append(Formatting.count(report.skippedLines, "malformed line")) }
        if report.skippedFiles > 0 { parts.append(Formatting.count(report.skippedFiles, "unreadable file")) }
        throw CommandExit(
            code: 2,
            "skipped \(parts.joined(separator: " and ")) (warnings above); the rest was stored. "
                + "Fix them and ingest again, or use --strict to store nothing unless everything reads")
    }
}

/// Options shared by `search` and `retrieval eval`.
struct RetrieverOptions: ParsableArguments {
    @Option(help: "bm25, dense (MiniLM, exact cosine) or hybrid (reciprocal rank fusion of both).")
    var retriever: String = "hybrid"
    @Flag(help: "Stem terms (Porter) for BM25.") var stem = false
    @Option(help: "BM25 k1.") var k1 = 1.2
    @Option(help: "BM25 b.") var b = 0.75
    @Option(help: "RRF's k.") var rrfK = 60.0
    @Option(help: "RRF weights of BM25 and dense, e.g. 1,1.") var weights = "1,1"
    @Flag(help: "Dense by exact search over every vector instead of the HNSW graph.") var exact = false
    @Option(help: "HNSW efSearch (at least the depth asked for).") var efSearch = 64

    func options() throws -> RetrievalService.Options {
        var options = RetrievalService.Options()
        guard let retriever = RetrievalService.Retriever(rawValue: retriever.lowercased()) else {
            throw CommandFailure("--retriever \(retriever): use bm25, dense or hybrid")
        }
        options.retriever = retriever
        options.stem = stem
        options.k1 = k1
        options.b = b
        options.rrfK = rrfK
        options.approximate = !exact
        options.efSearch = max(1, efSearch)
        let parts = weights.split(separator: ",").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.count == 2 else {
            throw CommandFailure("--weights \(weights): two numbers, BM25's and dense's, e.g. 1,0.5")
        }
        options.weights = parts
        return options
    }
}

/// `loupe search "query"`.
struct SearchCommand: LoupeCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract:
            "Search the workspace's chunks: each hit with every retriever's score and rank, and the matched terms.",
        discussion: "Every query is saved in retrieval_records, so it can be reopened and compared."
    )

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The query.") var query: String
    @OptionGroup var retrieverOptions: RetrieverOptions
    @Option(name: .customLong("k"), help: "How many hits.") var k = 10
    @Option(help: "Re-rank for diversity: mmr or none.") var rerank = "none"
    @Flag(help: "Print JSON.") var json = false

    func run(in context: CommandContext) throws {
        var options = try retrieverOptions.options()
        options.k = max(1, k)
        switch rerank.lowercased() {
        case "mmr": options.mmr = true
        case "none": options.mmr = false
        default: throw CommandFailure("--rerank \(rerank): use mmr or none")
        }
        let service = try RetrievalService.on(context)
        guard try CorpusTables(context.database()).corpusCounts().chunks > 0 else {
            throw CommandFailure("the workspace has no chunks yet: loupe ingest FILE first")
        }
        let hits = try service.search(query, options: options)
        let id = try service.record(query, options: options, hits: hits)
        if json {
            context.print(try Formatting.json(hits))
            return
        }
        Self.printHits(hits, options: options, in: context)
        context.print("saved as retrieval record \(id)")
    }

    /// The hits table `search` and `retrieval show` print.
    static func printHits(_ hits: [RetrievalService.Hit], options: RetrievalService.Options, in context: CommandContext)
    {
        context.print(
            "rank  bm25 (rank)     dense (rank)    \(options.retriever == .hybrid ? "rrf   " : "      ")  document  "
                + "title".padding(toLength: 52, withPad: " ", startingAt: 0) + "  [matched terms]")
        for hit in hits {
            func placement(_ p: RetrievalService.Placement?, _ format: String) -> String {
                guard let p else { return "—".padding(toLength: 15, withPad: " ", startingAt: 0) }
                return (String(format: format, p.score) + " (\(p.rank))").padding(
                    toLength: 15, withPad: " ", startingAt: 0)
            }
            let fused = options.retriever == .hybrid ? String(format: "%.4f", hit.fused.score) : "      "
            let title = UntrustedText.sanitized(hit.shownTitle)
            context.print(
                String(format: "%4d  ", hit.rank) + placement(hit.bm25, "%6.2f") + " " + placement(hit.dense, "%.3f")
                    + " "
                    + fused + "  "
                    + "\(hit.documentID)#\(hit.ordinal)".padding(toLength: 9, withPad: " ", startingAt: 0) + " "
                    + TextWidth.fit(title.replacingOccurrences(of: "\n", with: " "), toColumns: 52) + "  ["
                    + hit.matchedTerms.joined(separator: " ") + "]")
        }
    }
}

/// `loupe qrels load FILE`.
struct QrelsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qrels", abstract: "Relevance judgments for retrieval evaluation.", subcommands: [Load.self])

    struct Load: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Load TREC qrels (qid iteration docid relevance) into the workspace, replacing a file of that name.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("The qrels file.", valueName: "file")) var file: String
        @Option(
            help: ArgumentHelp(
                "The queries (JSONL), so a query typed in the Retrieval panel is matched to its judgments.",
                valueName: "file"))
        var queries: String?

        func run(in context: CommandContext) throws {
            let text = try CommandFailure.readText(file)
            let name = (file as NSString).lastPathComponent
            let qrels = try Qrels.parse(text, file: name)
            try CorpusTables(context.database()).replaceQrels(source: name, judgments: qrels.judgments)
            if let queries {
                let parsed = try CorpusReader.jsonl(CommandFailure.readText(queries), file: queries, strict: true)
                    .documents
                try CorpusTables(context.database()).replaceQrelsQueries(
                    source: name, queries: parsed.map { ($0.id, $0.body) })
                context.print("stored the texts of \(Formatting.count(parsed.count, "query", "queries"))")
            }
            let count = qrels.judgments.values.reduce(0) { $0 + $1.count }
            context.print(
                "loaded \(Formatting.count(count, "judgment")) for \(Formatting.count(qrels.judgments.count, "query", "queries")) as \(name)"
            )
        }
    }
}

/// `loupe retrieval eval`.
struct RetrievalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retrieval", abstract: "Evaluate retrieval; reopen and compare saved query runs.",
        subcommands: [Eval.self, Records.self, Show.self, Compare.self, Curves.self])

    struct Curves: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Vector indexes' recall@10 against queries per second, as `bench hnsw --record` kept them.",
            discussion: """
                The latest sweep of each engine on each workload: every efSearch's recall@10 and \
                single-thread queries/s, the queries/s where the curve reaches recall 0.95, and \
                Loupe's over the best peer's there. The Retrieval panel draws the same curves (c).
                """)

        @OptionGroup var global: GlobalOptions
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let all = try RetrievalService.on(context).annCurves()
            if json {
                struct Row: Encodable {
                    var workload: String
                    var engine: String
                    var version: String?
                    var buildSeconds: Double?
                    var queriesPerSecondAtRecall095: Double?
                    var points: [ANNSweepRecord.Point]
                }
                return context.print(
                    try Formatting.json(
                        all.flatMap { workload in
                            workload.curves.map {
                                Row(
                                    workload: workload.workload, engine: $0.engine, version: $0.version,
                                    buildSeconds: $0.buildSeconds,
                                    queriesPerSecondAtRecall095: $0.queriesPerSecond(atRecall: ANNCurves.recall),
                                    points: $0.points)
                            }
                        }))
            }
            guard !all.isEmpty else {
                return context.print(
                    "no sweeps yet: loupe bench hnsw --record (scripts/bench/hnsw.sh records the peers' too)")
            }
            for curves in all {
                context.print(UntrustedText.sanitized(curves.workload))
                context.print("  engine      version   build s  q/s at R@10 0.95  points (ef: recall@10, q/s)")
                for curve in curves.curves {
                    let at = curve.queriesPerSecond(atRecall: ANNCurves.recall).map { String(format: "%16.0f", $0) }
                    let points = curve.points.map {
                        String(format: "%d: %.3f, %.0f", $0.ef, $0.recallAt10, $0.queriesPerSecond)
                    }
                    context.print(
                        "  "
                            + TextWidth.fit(UntrustedText.sanitized(curve.engine), toColumns: 10).padding(
                                toLength: 10, withPad: " ", startingAt: 0)
                            + "  "
                            + TextWidth.fit(UntrustedText.sanitized(curve.version ?? "—"), toColumns: 8).padding(
                                toLength: 8, withPad: " ", startingAt: 0)
                            + (curve.buildSeconds.map { String(format: "%8.1f", $0) } ?? "       —") + "  "
                            + (at ?? String(repeating: " ", count: 15) + "—") + "  " + points.joined(separator: "; "))
                }
                if let (peer, ratio) = curves.ratio {
                    context.print("  loupe ÷ \(peer) at recall@10 0.95: " + String(format: "%.2f×", ratio))
                }
            }
        }
    }

    struct Records: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Saved query runs (from `search` and the Retrieval panel), newest first.")

        @OptionGroup var global: GlobalOptions
        @Option(help: "How many.") var limit = 20
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let records = try RetrievalService.on(context).records(limit: max(1, limit))
            struct Row: Encodable {
                var id: Int64
                var query: String
                var retriever: String
                var hits: Int
                var top: String?
                var createdAt: Date
            }
            let rows = records.map {
                Row(
                    id: $0.id, query: $0.query, retriever: $0.options.retriever.rawValue, hits: $0.hits.count,
                    top: $0.hits.first.map { "\($0.documentID)#\($0.ordinal)" }, createdAt: $0.createdAt)
            }
            if json { return context.print(try Formatting.json(rows)) }
            guard !rows.isEmpty else {
                return context.print("no retrieval records yet: loupe search \"query\" saves one")
            }
            context.print("   id  when              retriever  hits  top       query")
            let when = DateFormatter()
            when.dateFormat = "yyyy-MM-dd HH:mm"
            for row in rows {
                context.print(
                    String(format: "%5lld  ", row.id) + when.string(from: row.createdAt) + "  "
                        + row.retriever.padding(toLength: 9, withPad: " ", startingAt: 0)
                        + String(format: " %5d  ", row.hits)
                        + (row.top ?? "—").padding(toLength: 8, withPad: " ", startingAt: 0) + "  "
                        + TextWidth.fit(UntrustedText.sanitized(row.query), toColumns: 60))
            }
        }
    }

    struct Show: LoupeCommand {
        static let configuration = CommandConfiguration(abstract: "A saved query run's hits, as they were.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The record's id.") var id: Int64
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let record = try RetrievalService.on(context).records(id: id)[0]
            if json { return context.print(try Formatting.json(record.hits)) }
            context.print(
                "record \(record.id): \"\(UntrustedText.sanitized(record.query))\" (\(record.options.summary))")
            SearchCommand.printHits(record.hits, options: record.options, in: context)
        }
    }

    struct Compare: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "Two saved query runs side by side: each chunk's rank in both, overlap and movement.")

        @OptionGroup var global: GlobalOptions
        @Argument(help: "The first record.") var a: Int64
        @Argument(help: "The second record.") var b: Int64
        @Flag(help: "Print JSON.") var json = false

        func run(in context: CommandContext) throws {
            let service = try RetrievalService.on(context)
            let comparison = try service.compare(a, b)
            if json { return context.print(try Formatting.json(comparison)) }
            let (first, second) = (try service.records(id: a)[0], try service.records(id: b)[0])
            context.print("A = record \(a): \(first.options.summary)  \"\(UntrustedText.sanitized(first.query))\"")
            context.print("B = record \(b): \(second.options.summary)  \"\(UntrustedText.sanitized(second.query))\"")
            context.print("   A     B   move  document  title")
            for row in comparison.rows {
                let move: String
                switch (row.rankA, row.rankB, row.movement) {
                case (_, _, let m?) where m > 0: move = "↑\(m)"
                case (_, _, let m?) where m < 0: move = "↓\(-m)"
                case (_, _, .some): move = "="
                case (nil, _, _): move = "new"
                default: move = "gone"
                }
                context.print(
                    (row.rankA.map { String(format: "%4d", $0) } ?? "   —") + "  "
                        + (row.rankB.map { String(format: "%4d", $0) } ?? "   —") + "  "
                        + move.padding(toLength: 5, withPad: " ", startingAt: 0) + "  "
                        + "\(row.documentID)#\(row.ordinal)".padding(toLength: 9, withPad: " ", startingAt: 0) + " "
                        + TextWidth.fit(UntrustedText.sanitized(row.title), toColumns: 52))
            }
            context.print(
                String(
                    format: "%d of %d chunks in both (Jaccard %.2f)", comparison.overlap, comparison.rows.count,
                    comparison.jaccard))
        }
    }

    struct Eval: LoupeCommand {
        static let configuration = CommandConfiguration(
            abstract: "nDCG@10, MAP, MRR, recall@100 and P@10 per query and mean (trec_eval conventions), stored.",
            discussion: """
                Queries are JSONL ({"id", "text"}). Each runs at depth 100; chunks roll up to their \
                documents (a document scores its best chunk). Ties are broken as trec_eval does (document \
                id descending); gains are the qrels' relevance as-is; means are over every judged query \
                in the file (a query with nothing retrieved scores 0).
                """
        )

        @OptionGroup var global: GlobalOptions
        @Option(help: ArgumentHelp("The queries, JSONL.", valueName: "file")) var queries: String
        @Option(
            help: ArgumentHelp(
                "A qrels file, or the name of one loaded with `qrels load` (default: the last loaded).",
                valueName: "qrels"))
        var qrels: String?
        @OptionGroup var retrieverOptions: RetrieverOptions
        @Flag(help: "Print JSON (mean and per query).") var json = false

        func run(in context: CommandContext) throws {
            let corpus = CorpusTables(try context.database())
            let judgments: (source: String, judgments: [String: [String: Int]])
            if let qrels, FileManager.default.fileExists(atPath: qrels) {
                let text = try TextFile.read(qrels)
                let name = (qrels as NSString).lastPathComponent
                judgments = (name, try Qrels.parse(text, file: name).judgments)
            } else if let stored = try corpus.qrels(source: qrels) {
                judgments = stored
            } else {
                throw CommandFailure(
                    qrels.map { "\($0): neither a file nor loaded qrels" }
                        ?? "no qrels loaded: pass --qrels FILE or run loupe qrels load FILE")
            }
            let parsed = try CorpusReader.jsonl(CommandFailure.readText(queries), file: queries, strict: true).documents
                .map { ($0.id, $0.body) }
            let options = try retrieverOptions.options()
            let evaluation = try RetrievalService.on(context).evaluate(
                queries: parsed, qrels: judgments.judgments, options: options, reporter: context.reporter)
            let id = try corpus.recordRetrievalEval(
                retriever: options.retriever.rawValue, paramsJSON: try Formatting.json(options), queries: queries,
                qrelsSource: judgments.source, meanJSON: try Formatting.json(evaluation.mean),
                perQueryJSON: try Formatting.json(evaluation.perQuery))
            if json {
                context.print(try Formatting.json(evaluation))
                return
            }
            let m = evaluation.mean
            context.print(
                "\(options.retriever.rawValue)\(options.stem ? " (stemmed)" : "") on \(Formatting.count(evaluation.queries, "judged query", "judged queries")) (\(judgments.source)):"
            )
            context.print(
                String(
                    format: "  nDCG@10 %.4f   MAP@100 %.4f   MRR %.4f   R@100 %.4f   P@10 %.4f", m.ndcg[10] ?? 0,
                    m.averagePrecision, m.reciprocalRank, m.recall[100] ?? 0, m.precision[10] ?? 0))
            context.print("stored as retrieval eval \(id)")
        }
    }
}
