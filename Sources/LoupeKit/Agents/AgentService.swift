import Foundation
import LoupeAgents
import LoupeBase
import LoupeModels
import LoupeStore
import LoupeTensor
import Synchronization

/// Runs Loupe's own agent on a workspace: its tools read the workspace (retrieval, chunks and
/// documents, read-only SQL), and the run is recorded as a trace while it happens.
package struct AgentService: Sendable {
    /// The workspace's tables: a SQLite ``Workspace`` or a PostgreSQL workspace.
    package let database: any SQLDatabase
    let models: ModelLibrary

    package init(database: any SQLDatabase, models: ModelLibrary) {
        self.database = database
        self.models = models
    }

    package init(workspace: Workspace, models: ModelLibrary) {
        self.init(database: workspace, models: models)
    }

    /// Rows the sql tool returns at most.
    package static let sqlRowLimit = 50

    /// The workspace tools: search, read, calculator, sql (final_answer is the runner's).
    package func tools() throws -> [AgentTool] {
        let retrieval = RetrievalService(database: database, models: models)
        let hasEmbeddings = try retrieval.corpus.corpusCounts(model: try retrieval.embeddingModel()).embedded > 0
        var options = RetrievalService.Options()
        options.retriever = hasEmbeddings && models.hasMiniLM ? .hybrid : .bm25
        let context = Mutex<RetrievalService.Context?>(nil)
        let agent = AgentTables(database)
        let roofline = RooflineTables(database)
        let fixedOptions = options
        let precision = try retrieval.precision()
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
            perform: { arguments in
                let started = OperationProfile.now()
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
                // The query's MiniLM forward pass (hybrid search), timed op by op.
                let profile = loaded.embedder == nil ? nil : OperationProfile(keepingCalls: true)
                let hits = try retrieval.rank(
                    query, options: options, context: loaded, details: false, profile: profile)
                _ = try? retrieval.record(query, options: options, hits: hits)
                var spans: [TraceSpan] = []
                if let profile, let embedder = loaded.embedder {
                    let tokens = embedder.tokenizer.encode(query).count
                    let runs = ForwardPassRecord.kernelRuns(
                        profile.entriesByTime, precision: precision, workload: "\(tokens) tokens (agent search)",
                        threads: 1)
                    let ids = try roofline.record(runs)
                    spans = ForwardPassRecord.spans(
                        profile, origin: started, tokens: tokens, runIDs: ids, precision: precision)
                }
                let text = JSONValue.array(
                    hits.map { hit in
                        .object([
                            "chunk": .number(Double(hit.chunkID)), "document": .string(hit.documentID),
                            "title": .string(hit.title), "score": .number((hit.fused.score * 1e4).rounded() / 1e4),
                            "snippet": .string(String(hit.text.prefix(200))),
                        ])
                    }
                ).compactJSON
                return ToolOutput(text, spans: spans)
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
                    guard let chunk = try agent.chunk(id: id) else { throw AgentToolError("no chunk \(id)") }
                    return "chunk \(chunk.id) · document \(chunk.documentID) · \(chunk.title)\n\(chunk.text)"
                }
                if let id = arguments["document"]?.text {
                    guard let document = try retrieval.corpus.document(externalID: id) else {
                        throw AgentToolError("no document '\(id)'")
                    }
                    return "document \(id) · \(document.title)\n\(document.body)"
                }
                throw AgentToolError("give 'chunk' (an id) or 'document'")
            })
        let tables = try agent.tableNames()
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
                do { result = try agent.readOnlyQuery(query, limit: Self.sqlRowLimit) } catch let error
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

    /// The local provider: SmolLM2-135M-Instruct in-process (its GGUF from `loupe models fetch
    /// smollm2`), tool calls constrained by a grammar.
    ///
    /// - Throws: `ModelError` when the model file is missing or does not load.
    package func localModel() throws -> LocalModelProvider {
        LocalModelProvider(generator: try models.smolLM2())
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
        // Traces left half-written by a process that was killed are marked interrupted first.
        try LeaseTables(database).markInterruptedAgentTraces()
        var traceID: Int64?
        var failure: Error?
        // While the run records its trace, a lease says which process does: if it is killed, the
        // next run marks the trace interrupted instead of leaving its root span unset for ever.
        var heartbeat: LeaseHeartbeat?
        defer { heartbeat?.stop() }
        let trace = runner.run(
            question, id: id, isCancelled: { reporter.isCancelled }, onText: onText,
            onUpdate: { trace in
                guard failure == nil else { return }
                do {
                    // The first import takes the lease in its own transaction: a kill between the
                    // two would leave a trace that no later run could tell was interrupted.
                    let counts = try TraceTables(database).importTraces(
                        [TraceService.record(trace, sourceFile: nil)],
                        leaseKind: heartbeat == nil ? JobLease.Kind.agentTrace : nil)
                    traceID = counts.ids.first
                    if heartbeat == nil, let traceID {
                        heartbeat = LeaseHeartbeat.start(
                            database: database, kind: JobLease.Kind.agentTrace, targetID: traceID)
                    }
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

/// A tool call or a fork that cannot be done: the model reads it as the tool's result in a run,
/// the user as the command's error in a fork.
package struct AgentToolError: UserFacingError {
    package var description: String
    package init(_ description: String) { self.description = description }
}

extension AgentService {
    /// What a fork changes at its span: a tool's result, or (at a model call) the last user
    /// message the model was sent.
    package enum ForkEdit: Hashable, Sendable {
        case toolResult(String)
        case userMessage(String)
    }

    /// Forks trace `parentID` at span `ordinal`: copies the run up to there with the edit made,
    /// then lets `provider` continue with the workspace's tools. The fork is a new trace linked to
    /// its parent (parent id and span ordinal), recorded live like any run, under its parent's
    /// limits with `limits` in their place (see ``continueFork``).
    package func fork(
        _ parentID: Int64, at ordinal: Int, edit: ForkEdit, provider: any ChatProvider, limits: AgentLimits.Overrides,
        reporter: JobReporter = .detached(), onStep: (Int64, Trace) -> Void = { _, _ in }
    ) throws -> (id: Int64, trace: Trace) {
        let traces = TraceService(tables: TraceTables(database))
        let parent = try traces.trace(parentID)
        guard parent.spans.indices.contains(ordinal), ordinal > 0 else {
            throw AgentToolError(
                "trace \(parentID) has no span \(ordinal) to fork at (spans 1…\(parent.spans.count - 1))")
        }
        let target = parent.spans[ordinal]
        var kept: [TraceSpan]
        var messages: [Message]
        switch (target.kind, edit) {
        case (.tool, .toolResult(let result)):
            // The model call that asked for this tool, and every call it made.
            guard
                let callerIndex = parent.spans[..<ordinal].lastIndex(where: { span in
                    span.kind == .llm && span.output.contains { !$0.toolCalls.isEmpty }
                })
            else { throw AgentToolError("span \(ordinal) is a tool call no model call before it asked for") }
            let caller = parent.spans[callerIndex]
            let calls = caller.output.flatMap(\.toolCalls)
            // Its calls, each followed by the spans of its work (a MiniLM forward pass).
            let following = parent.spans[(callerIndex + 1)...].prefix { $0.kind != .llm && $0.kind != .agent }
            let answered = following.filter { $0.kind == .tool }
            kept = Array(parent.spans[...callerIndex]) + following
            if let index = kept.lastIndex(where: { $0.spanID == target.spanID }) {
                kept[index].tool?.result = result
                kept[index].tool?.error = nil
                kept[index].status = .ok
                kept[index].attributes["loupe.fork.edited"] = .bool(true)
            }
            messages = caller.input + caller.output
            for (i, call) in calls.enumerated() {
                let span =
                    answered.first { $0.tool?.id != nil && $0.tool?.id == call.id }
                    ?? (i < answered.count ? answered[answered.startIndex + i] : nil)
                let text =
                    span?.spanID == target.spanID
                    ? result : span?.tool.map { $0.error.map { "error: \($0)" } ?? $0.result ?? "" } ?? ""
                messages.append(Message(role: "tool", text: text, toolCallID: call.id ?? span?.tool?.id))
            }
        case (.llm, .userMessage(let text)):
            guard let last = target.input.lastIndex(where: { $0.role == "user" }) else {
                throw AgentToolError("span \(ordinal)'s input has no user message to change")
            }
            messages = target.input
            messages[last].text = text
            kept = Array(parent.spans[..<ordinal])
            if last == target.input.indices.first(where: { target.input[$0].role == "user" }) {
                kept[0].input = [Message(role: "user", text: text)]
            }
        case (.tool, .userMessage), (.llm, .toolResult):
            throw AgentToolError(
                "span \(ordinal) is a \(target.kind.rawValue) span: change a tool span's result (--result) or a model call's user message (--message)"
            )
        default:
            throw AgentToolError(
                "span \(ordinal) is a \(target.kind.rawValue) span: fork at a model call or a tool call")
        }
        return try continueFork(
            parent, id: parentID, at: ordinal, kept: kept, messages: messages, provider: provider, limits: limits,
            reporter: reporter, onStep: onStep)
    }

    /// Records the fork of `parent` (trace `parentID`) at span `ordinal` and lets `provider` go on
    /// from `messages`: `kept` are the parent's spans copied into it, `metadata` adds to the link
    /// (parent id and span ordinal) what else says where it forked (a token's index), `name`
    /// replaces "fork of PARENT" as its name.
    ///
    /// The fork runs under the limits its parent recorded (the defaults for a parent recorded
    /// before runs kept them), each one `limits` gives in its place: a fork that changes one
    /// thing compares with its parent only when the same budget bounds both.
    func continueFork(
        _ parent: Trace, id parentID: Int64, at ordinal: Int, kept: [TraceSpan], messages: [Message],
        provider: any ChatProvider, limits overrides: AgentLimits.Overrides, metadata: JSONObject = [:],
        name: String? = nil,
        reporter: JobReporter, onStep: (Int64, Trace) -> Void
    ) throws -> (id: Int64, trace: Trace) {
        var kept = kept
        // Keep only spans whose parents were kept, so the tree stays whole.
        var ids = Set<String>()
        kept = kept.filter { span in
            guard span.parentID == nil || ids.contains(span.parentID!) else { return false }
            ids.insert(span.spanID)
            return true
        }
        var fork = Trace(
            externalID: "fork-\(parentID)-\(ordinal)-" + String(UInt32.random(in: 0...UInt32.max), radix: 16),
            format: .loupe, name: name ?? "fork of \(parent.name)", spans: kept)
        fork.timed = parent.timed
        fork.metadata = ["forked_from": .number(Double(parentID)), "fork_span": .number(Double(ordinal))]
        for (key, value) in metadata { fork.metadata[key] = value }
        let limits = overrides.applied(to: parent.spans.first.flatMap(AgentLimits.init(recordedOn:)) ?? AgentLimits())
        var runner = ReActRunner(provider: provider, tools: try tools(), limits: limits)
        // Continue the clock where the copied steps end: real time for a timed parent, the next
        // tick for one that only has an order. The root is left out: copied from the parent, it
        // ends where the whole parent run ended, and the fork's steps would start that much late.
        let end = kept.dropFirst().map { $0.endNs ?? $0.startNs }.max() ?? kept.first?.startNs ?? 0
        if parent.timed {
            let offset = Int64(Date().timeIntervalSince1970 * 1e9) - end
            let clock = runner.now
            runner.now = { clock() - offset + 1_000 }
        } else {
            let ticks = Mutex(end)
            runner.now = {
                ticks.withLock {
                    $0 += 1
                    return $0
                }
            }
        }
        var traceID: Int64?
        var failure: Error?
        let finished = runner.resume(
            fork, messages: messages, isCancelled: { reporter.isCancelled },
            onUpdate: { trace in
                guard failure == nil else { return }
                do {
                    let record = TraceService.record(
                        trace, sourceFile: nil, parentTraceID: parentID, forkOrdinal: ordinal)
                    traceID = try TraceTables(database).importTraces([record]).ids.first
                    reporter.report(
                        JobProgress(
                            completed: Double(trace.spans.count), total: nil,
                            detail: "trace \(traceID ?? 0) · fork of \(parentID) · \(trace.spans.last?.name ?? "")"))
                    if let traceID { onStep(traceID, trace) }
                } catch {
                    failure = error
                }
            })
        if let failure { throw failure }
        guard let traceID else { throw AgentToolError("the fork was not recorded") }
        return (traceID, finished)
    }
}
