import Foundation
import LoupeBase

/// The `offline` provider: an in-process policy that plays the model's part without a network.
/// It reads the conversation and decides the next turn as a ReAct model would:
/// 1. route the question to a tool: among the tools whose arguments it can read off the question
///    (an arithmetic expression for the calculator, "how many" and a table name for sql), the one
///    whose description is most similar to the question (MiniLM cosine when the weights are here,
///    word overlap otherwise; `similarityName` says which); else search, with the question as
///    the query;
/// 2. after `search`, `read` the best chunks;
/// 3. answer with the read sentences most similar to the question, citing their chunks.
/// Traces label it `offline`; it makes no claim to be a language model.
package struct OfflinePolicy: ChatProvider {
    /// Similarity of a text to each candidate, higher is closer.
    package typealias Similarity = @Sendable (_ text: String, _ candidates: [String]) -> [Double]

    package var similarity: Similarity
    package var similarityName: String
    /// How many chunks to read after a search, and sentences in an answer.
    package var readCount = 2
    package var answerSentences = 2

    package var label: String { "offline" }
    package var model: String { "offline-policy (\(similarityName) routing)" }

    package init(similarity: @escaping Similarity, named name: String) {
        self.similarity = similarity
        self.similarityName = name
    }

    /// Word-overlap similarity (Jaccard over lowercased words of 3+ letters): the fallback
    /// when no embedding model is at hand.
    package static let wordOverlap: Similarity = { text, candidates in
        func words(_ s: String) -> Set<Substring> {
            Set(s.lowercased().split { !$0.isLetter && !$0.isNumber }.filter { $0.count >= 3 })
        }
        let query = words(text)
        return candidates.map { candidate in
            let other = words(candidate)
            let union = query.union(other).count
            return union == 0 ? 0 : Double(query.intersection(other).count) / Double(union)
        }
    }

    package func complete(_ request: ChatRequest, onText: @escaping @Sendable (String) -> Void) throws(ProviderError)
        -> ChatResponse
    {
        let message = decide(request)
        if !message.text.isEmpty { onText(message.text) }
        // It runs in-process: no tokens are billed, so its cost is a true zero, not a missing price.
        return ChatResponse(message: message, usage: Usage(cost: 0), model: model, finishReason: "stop")
    }

    private func decide(_ request: ChatRequest) -> Message {
        let question = request.messages.last { $0.role == "user" }?.text ?? ""
        let available = Dictionary(request.tools.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        // The calls made so far, with their results.
        var calls: [(call: ToolCall, result: String)] = []
        let results = Dictionary(
            request.messages.compactMap { m in m.toolCallID.map { ($0, m.text) } }, uniquingKeysWith: { a, _ in a })
        for m in request.messages where m.role == "assistant" {
            for call in m.toolCalls { calls.append((call, call.id.flatMap { results[$0] } ?? "")) }
        }
        let turn = request.messages.filter { $0.role == "assistant" }.count
        func call(_ name: String, _ arguments: JSONValue, thought: String) -> Message {
            Message(
                role: "assistant", text: thought,
                toolCalls: [ToolCall(id: "offline_\(turn)_0", name: name, arguments: arguments.compactJSON)])
        }
        func answer(_ text: String, citations: [Int64] = [], thought: String) -> Message {
            guard available["final_answer"] != nil else { return Message(role: "assistant", text: text) }
            var arguments: JSONObject = ["answer": .string(text)]
            if !citations.isEmpty { arguments["citations"] = .array(citations.map { .number(Double($0)) }) }
            return call("final_answer", .object(arguments), thought: thought)
        }

        guard let last = calls.last else { return route(question, tools: request.tools, call: call, answer: answer) }
        switch last.call.name {
        case "calculator":
            let expression = (try? JSONValue.parse(last.call.arguments))?["expression"]?.string ?? ""
            if last.result.hasPrefix("error:") {
                return answer(
                    "I could not compute \(expression): \(last.result.dropFirst(7))",
                    thought: "The calculator refused the expression.")
            }
            return answer("\(expression) = \(last.result)", thought: "The calculator gave the result.")
        case "sql":
            if last.result.hasPrefix("error:") {
                return answer("The query failed: \(last.result.dropFirst(7))", thought: "The query failed.")
            }
            // "column | column" then rows: one value reads "documents: 3", more as "a | b; …".
            let lines = last.result.split(separator: "\n").map(String.init)
            if lines.count == 2, !lines[0].contains(" | ") {
                return answer("\(lines[0]): \(lines[1])", thought: "The query answered it.")
            }
            return answer(lines.joined(separator: "; "), thought: "The query answered it.")
        case "search":
            let hits = (try? JSONValue.parse(last.result))?.array ?? []
            let chunks = hits.compactMap { $0["chunk"]?.int }.prefix(readCount)
            guard !chunks.isEmpty, available["read"] != nil else {
                return answer("Nothing in the workspace matches the question.", thought: "The search found nothing.")
            }
            return Message(
                role: "assistant", text: "Read the \(chunks.count) best hits.",
                toolCalls: chunks.enumerated().map { i, chunk in
                    ToolCall(
                        id: "offline_\(turn)_\(i)", name: "read",
                        arguments: JSONValue.object(["chunk": .number(Double(chunk))]).compactJSON)
                })
        case "read":
            return compose(question, reads: calls.filter { $0.call.name == "read" }, answer: answer)
        default:
            return answer(last.result, thought: "The \(last.call.name) tool answered it.")
        }
    }

    private func route(
        _ question: String, tools: [ToolSpec], call: (String, JSONValue, String) -> Message,
        answer: (String, [Int64], String) -> Message
    ) -> Message {
        let routable = tools.filter { $0.name != "final_answer" && $0.name != "read" }
        guard !routable.isEmpty else { return answer("I have no tools to answer with.", [], "No tools.") }
        let scores = similarity(question, routable.map { "\($0.name): \($0.description)" })
        // Tools whose arguments it can read off the question come first, in similarity order;
        // search, which takes any question, is the fallback.
        let ranked = zip(routable, scores).sorted { $0.1 > $1.1 }.map(\.0)
        for tool in ranked.filter({ $0.name != "search" }) + ranked.filter({ $0.name == "search" }) {
            switch tool.name {
            case "calculator":
                guard let expression = Calculator.expression(in: question) else { continue }
                return call(
                    "calculator", .object(["expression": .string(expression)]), "Arithmetic: use the calculator.")
            case "sql":
                guard let sql = Self.countQuery(question, schema: tool.description) else { continue }
                return call("sql", .object(["query": .string(sql)]), "A count over the workspace: use SQL.")
            case "search":
                return call(
                    "search", .object(["query": .string(question), "k": .number(5)]),
                    "Look the question up in the corpus.")
            default: continue
            }
        }
        return answer("I cannot answer that with the tools I have.", [], "No tool fits.")
    }

    /// `SELECT COUNT(*) FROM t` for "how many …" naming a table listed in the sql tool's
    /// description ("Tables: documents, chunks, …").
    static func countQuery(_ question: String, schema: String) -> String? {
        let lowered = question.lowercased()
        guard lowered.contains("how many") || lowered.contains("number of") || lowered.contains("count") else {
            return nil
        }
        let tables =
            schema.components(separatedBy: "Tables:").last?.split { ", .\n".contains($0) }.map(String.init) ?? []
        let words = Set(lowered.split { !$0.isLetter && $0 != "_" }.map(String.init))
        guard
            let table = tables.first(where: { t in
                words.contains(t) || words.contains(String(t.dropLast()))
                    || words.contains(t.replacingOccurrences(of: "_", with: " "))
            })
        else { return nil }
        return "SELECT COUNT(*) AS \(table) FROM \(table)"
    }

    /// The answer: the read sentences most similar to the question, each with its chunk cited.
    private func compose(
        _ question: String, reads: [(call: ToolCall, result: String)],
        answer: (String, [Int64], String) -> Message
    ) -> Message {
        var sentences: [(text: String, chunk: Int64)] = []
        for read in reads where !read.result.hasPrefix("error:") {
            let chunk = (try? JSONValue.parse(read.call.arguments))?["chunk"]?.int ?? 0
            // The read tool prints a header line, then the text.
            let body =
                read.result.split(separator: "\n", maxSplits: 1).dropFirst().first.map(String.init) ?? read.result
            for sentence in Self.sentences(body) where sentence.count >= 20 { sentences.append((sentence, chunk)) }
        }
        guard !sentences.isEmpty else {
            return answer("What I read does not answer the question.", [], "Nothing usable was read.")
        }
        let scores = similarity(question, sentences.map(\.text))
        let best = zip(sentences.indices, scores).sorted { $0.1 > $1.1 }.prefix(answerSentences).map(\.0).sorted()
        let text = best.map { "\(sentences[$0].text) [chunk \(sentences[$0].chunk)]" }.joined(separator: " ")
        var cited: [Int64] = []
        for i in best where !cited.contains(sentences[i].chunk) { cited.append(sentences[i].chunk) }
        return answer(text, cited, "Answer with the best-supported sentences.")
    }

    /// Sentences, never across a line break (a title line is not part of the next sentence).
    static func sentences(_ text: String) -> [String] {
        text.split(whereSeparator: \.isNewline).flatMap { sentences(inLine: String($0)) }
    }

    private static func sentences(inLine text: String) -> [String] {
        var result: [String] = []
        var current = ""
        for character in text {
            current.append(character)
            if ".?!".contains(character) {
                let trimmed = current.trimmingCharacters(in: .whitespacesAndNewlines)
                if !trimmed.isEmpty { result.append(trimmed) }
                current = ""
            }
        }
        let rest = current.trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { result.append(rest) }
        return result.map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    }
}
