import Foundation
import LoupeAgents
import LoupeModels
import LoupeStore
import Synchronization

/// Runs Loupe's own agent on a workspace: its tools read the workspace (retrieval, chunks and
/// documents, read-only SQL), and the run is recorded as a trace while it happens.
package struct AgentService: Sendable {
    package let workspace: Workspace
    private let models: ModelLibrary

    package init(workspace: Workspace, models: ModelLibrary) {
        self.workspace = workspace
        self.models = models
    }

    /// Rows the sql tool returns at most.
    package static let sqlRowLimit = 50

    /// The workspace tools: search, read, calculator, sql (final_answer is the runner's).
    package func tools() throws -> [AgentTool] {
        let retrieval = RetrievalService(workspace: workspace, models: models)
        let hasEmbeddings = try workspace.corpusCounts(model: RetrievalService.embeddingModel).embedded > 0
        var options = RetrievalService.Options()
        options.retriever = hasEmbeddings && models.hasMiniLM ? .hybrid : .bm25
        let context = Mutex<RetrievalService.Context?>(nil)
        let workspace = workspace
        let fixedOptions = options
        let search = AgentTool(
            spec: ToolSpec(
                name: "search",
                description:
                    "Search the workspace's documents for passages about a topic (\(options.retriever.rawValue) retrieval); returns chunk ids, titles, scores and snippets.",
                parameters: .object([
                    "type": "object",
                    "properties": .object([
                        "query": .object(["type": "string"]),
                        "k": .object(["type": "integer", "minimum": .number(1), "maximum": .number(20)]),
                    ]),
                    "required": .array(["query"]),
                ])),
            run: { arguments in
                guard let query = arguments["query"]?.string, !query.isEmpty else {
                    throw AgentToolError("missing argument 'query'")
                }
                var options = fixedOptions
                options.k = max(1, min(20, Int(arguments["k"]?.int ?? 5)))
                let loaded = try context.withLock { (slot: inout RetrievalService.Context?) in
                    if let slot { return slot }
                    let fresh = try retrieval.context(for: options)
                    slot = fresh
                    return fresh
                }
                let hits = try retrieval.rank(query, options: options, context: loaded, details: false)
                _ = try? retrieval.record(query, options: options, hits: hits)
                return JSONValue.array(
                    hits.map { hit in
                        .object([
                            "chunk": .number(Double(hit.chunkID)), "document": .string(hit.documentID),
                            "title": .string(hit.title), "score": .number((hit.fused.score * 1e4).rounded() / 1e4),
                            "snippet": .string(String(hit.text.prefix(200))),
                        ])
                    }
                ).compactJSON
            })
        let read = AgentTool(
            spec: ToolSpec(
                name: "read", description: "Read one chunk by its id, or a whole document by its id.",
                parameters: .object([
                    "type": "object",
                    "properties": .object([
                        "chunk": .object(["type": "integer"]), "document": .object(["type": "string"]),
                    ]),
                ])),
            run: { arguments in
                if let id = arguments["chunk"]?.int {
                    guard let chunk = try workspace.chunk(id: id) else { throw AgentToolError("no chunk \(id)") }
                    return "chunk \(chunk.id) · document \(chunk.documentID) · \(chunk.title)\n\(chunk.text)"
                }
                if let id = arguments["document"]?.text {
                    guard let document = try workspace.document(externalID: id) else {
                        throw AgentToolError("no document '\(id)'")
                    }
                    return "document \(id) · \(document.title)\n\(document.body)"
                }
                throw AgentToolError("give 'chunk' (an id) or 'document'")
            })
        let tables = try workspace.tableNames()
        let sql = AgentTool(
            spec: ToolSpec(
                name: "sql",
                description:
                    "Run one read-only SELECT on the workspace database (at most \(Self.sqlRowLimit) rows). Tables: \(tables.joined(separator: ", ")).",
                parameters: .object([
                    "type": "object", "properties": .object(["query": .object(["type": "string"])]),
                    "required": .array(["query"]),
                ])),
            run: { arguments in
                guard let query = arguments["query"]?.string else { throw AgentToolError("missing argument 'query'") }
                let result: (columns: [String], rows: [[String]], truncated: Bool)
                do { result = try workspace.readOnlyQuery(query, limit: Self.sqlRowLimit) } catch let error
                    as WorkspaceError
                {
                    throw AgentToolError(error.message)
                }
                var lines = [result.columns.joined(separator: " | ")]
                lines += result.rows.map { $0.joined(separator: " | ") }
                if result.truncated { lines.append("… (first \(Self.sqlRowLimit) rows)") }
                return lines.joined(separator: "\n")
            })
        return [search, read, .calculator, sql]
    }

    /// The offline provider, routing by MiniLM similarity when the weights are here, by word
    /// overlap otherwise.
    package func offlinePolicy() -> OfflinePolicy {
        guard models.hasMiniLM, let embedder = try? models.miniLM() else {
            return OfflinePolicy(similarity: OfflinePolicy.wordOverlap, named: "word-overlap")
        }
        return OfflinePolicy(
            similarity: { text, candidates in
                let vectors = embedder.embed([text] + candidates, parallelBatches: 1).map(\.vector)
                let query = vectors[0]
                return vectors.dropFirst().map { Double(Self.cosine(query, $0)) }
            }, named: "MiniLM")
    }

    static func cosine(_ a: [Float], _ b: [Float]) -> Float {
        var dot: Float = 0
        var na: Float = 0
        var nb: Float = 0
        for i in a.indices {
            dot += a[i] * b[i]
            na += a[i] * a[i]
            nb += b[i] * b[i]
        }
        return na == 0 || nb == 0 ? 0 : dot / (na.squareRoot() * nb.squareRoot())
    }

    /// Runs the agent on `question`, recording the trace after every span (the same row is
    /// updated in place, so a viewer sees it grow). Returns the trace's id and the trace.
    package func run(
        _ question: String, provider: any ChatProvider, limits: AgentLimits, reporter: JobReporter = .detached(),
        onText: @escaping @Sendable (String) -> Void = { _ in }, onStep: (Int64, Trace) -> Void = { _, _ in }
    ) throws -> (id: Int64, trace: Trace) {
        let runner = ReActRunner(provider: provider, tools: try tools(), limits: limits)
        let id =
            "agent-" + ISO8601DateFormatter().string(from: Date()) + "-"
            + String(UInt32.random(in: 0...UInt32.max), radix: 16)
        var traceID: Int64?
        var failure: Error?
        let trace = runner.run(
            question, id: id, isCancelled: { reporter.isCancelled }, onText: onText,
            onUpdate: { trace in
                guard failure == nil else { return }
                do {
                    let counts = try workspace.importTraces([TraceService.record(trace, sourceFile: nil)])
                    traceID = counts.ids.first
                    let steps = trace.spans.count - 1
                    reporter.report(
                        JobProgress(
                            completed: Double(steps), total: Double(limits.maxSteps * 2),
                            detail: "trace \(traceID ?? 0) · \(steps) spans · \(trace.spans.last?.name ?? "")"))
                    if let traceID { onStep(traceID, trace) }
                } catch {
                    failure = error
                }
            })
        if let failure { throw failure }
        guard let traceID else { throw AgentToolError("the run was not recorded") }
        return (traceID, trace)
    }
}

package struct AgentToolError: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
