import Foundation
import LoupeAgents
import LoupeBase

/// Scores an answer against an item's targets, per the scorer's kind.
package enum AnswerScorer {
    package static func score(
        _ spec: ScorerSpec, output: String, item: EvalItem, tools: ScoringTools = ScoringTools()
    ) throws(ScorerError) -> Verdict {
        let name = spec.name
        let targets = item.targets
        func needTargets() throws(ScorerError) {
            if targets.isEmpty { throw ScorerError("item \(item.id) has no target for \(name) to compare with") }
        }
        switch spec.kind {
        case .exact:
            try needTargets()
            let answer = output.trimmingCharacters(in: .whitespacesAndNewlines)
            let hit = targets.first { $0.trimmingCharacters(in: .whitespacesAndNewlines) == answer }
            return .binary(name, hit != nil, hit.map { "equals \(quoted($0))" } ?? "equals none of \(list(targets))")
        case .normalizedExact:
            try needTargets()
            let answer = TextNormalizer.normalize(output)
            let hit = targets.first { TextNormalizer.normalize($0) == answer }
            return .binary(
                name, hit != nil,
                hit.map { "equals \(quoted($0)) once normalised" }
                    ?? "normalised answer \(quoted(answer)) equals no target")
        case .contains:
            try needTargets()
            let answer = TextNormalizer.normalize(output)
            let hit = targets.first {
                let target = TextNormalizer.normalize($0)
                return !target.isEmpty && " \(answer) ".contains(" \(target) ")
            }
            return .binary(
                name, hit != nil, hit.map { "contains \(quoted($0))" } ?? "contains none of \(list(targets))")
        case .regex(let pattern):
            guard let regex = try? NSRegularExpression(pattern: pattern) else {
                throw ScorerError("pattern \(pattern) is not a valid regular expression")
            }
            let range = NSRange(output.startIndex..., in: output)
            if let match = regex.firstMatch(in: output, range: range), let span = Range(match.range, in: output) {
                return .binary(name, true, "matches \(pattern) at \(quoted(String(output[span])))")
            }
            return .binary(name, false, "does not match \(pattern)")
        case .tokenF1(let threshold):
            try needTargets()
            var best = (f1: -1.0, target: "")
            for target in targets {
                let f1 = TextNormalizer.tokenF1(output, target)
                if f1 > best.f1 { best = (f1, target) }
            }
            let said = "token F1 \(format(best.f1)) against \(quoted(best.target))"
            guard let threshold else { return Verdict(scorer: name, value: best.f1, passed: nil, explanation: said) }
            return Verdict(
                scorer: name, value: best.f1, passed: best.f1 >= threshold,
                explanation: said + (best.f1 >= threshold ? " ≥ " : " < ") + format(threshold))
        case .numeric(let tolerance, let relative):
            try needTargets()
            guard let answer = TextNormalizer.lastNumber(output) else {
                return .binary(name, false, "no number in the answer")
            }
            var closest: (distance: Double, target: Double)?
            for target in targets {
                guard let value = TextNormalizer.lastNumber(target) else {
                    throw ScorerError("item \(item.id)'s target \(quoted(target)) is not a number")
                }
                let distance = abs(answer - value)
                if closest == nil || distance < closest!.distance { closest = (distance, value) }
            }
            let (distance, target) = closest!
            let allowed = relative ? tolerance * abs(target) : tolerance
            return .binary(
                name, distance <= allowed,
                "\(format(answer)) vs \(format(target)): off by \(format(distance)) "
                    + (distance <= allowed ? "≤ " : "> ") + format(allowed),
                details: .object(["answer": .number(answer), "target": .number(target)]))
        case .jsonSchema(let schema):
            let text = TextNormalizer.stripCodeFence(output)
            let value: JSONValue
            do { value = try JSONValue.parse(text) } catch {
                return .binary(name, false, "not JSON: \(error)")
            }
            if let violation = JSONSchemaValidator.firstViolation(value, schema: schema) {
                return .binary(name, false, violation)
            }
            return .binary(name, true, "valid against the schema")
        case .embedding(let threshold):
            try needTargets()
            guard let embed = tools.embed else {
                throw ScorerError("the embedding scorer needs MiniLM: run scripts/fetch-minilm")
            }
            let vectors: [[Float]]
            do { vectors = try embed([output] + targets) } catch { throw ScorerError("embedding failed: \(error)") }
            var best = (cosine: -1.0, target: "")
            for (index, target) in targets.enumerated() {
                let cosine = Double(zip(vectors[0], vectors[index + 1]).reduce(Float(0)) { $0 + $1.0 * $1.1 })
                if cosine > best.cosine { best = (cosine, target) }
            }
            let value = Swift.min(1, Swift.max(0, best.cosine))
            return Verdict(
                scorer: name, value: value, passed: best.cosine >= threshold,
                explanation: "MiniLM cosine \(format(best.cosine)) with \(quoted(best.target))"
                    + (best.cosine >= threshold ? " ≥ " : " < ") + format(threshold),
                details: .object(["cosine": .number(best.cosine)]))
        case .judge(let providerSpec, let template):
            guard let make = tools.provider else { throw ScorerError("no provider for the judge") }
            let provider: any ChatProvider
            do { provider = try make(providerSpec) } catch { throw ScorerError("judge provider: \(error)") }
            let prompt =
                template
                .replacingOccurrences(of: "{input}", with: item.input)
                .replacingOccurrences(of: "{target}", with: targets.joined(separator: " | "))
                .replacingOccurrences(of: "{output}", with: output)
            let response: ChatResponse
            do {
                response = try provider.complete(
                    ChatRequest(messages: [Message(role: "user", text: prompt)], tools: []), onText: { _ in })
            } catch { throw ScorerError("the judge's call failed: \(error)") }
            let verdict = response.message.text
            let details: JSONValue = .object([
                "prompt": .string(prompt), "verdict": .string(verdict), "model": .string(response.model),
            ])
            guard let value = JudgeVerdict.value(verdict) else {
                throw ScorerError("the judge's verdict has no grade: \(quoted(String(verdict.prefix(120))))")
            }
            return Verdict(
                scorer: name, value: value, passed: value >= 0.5,
                explanation: "judge \(response.model): " + JudgeVerdict.summary(verdict), details: details)
        case .ndcg, .averagePrecision, .reciprocalRank, .recall, .precision:
            throw ScorerError("\(name) scores rankings, not answers")
        }
    }

    static func quoted(_ text: String) -> String {
        let line = text.replacingOccurrences(of: "\n", with: " ")
        return "\"" + (line.count > 60 ? line.prefix(57) + "…" : line) + "\""
    }

    static func list(_ targets: [String]) -> String { targets.prefix(3).map(quoted).joined(separator: ", ") }

    package static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%.3g", value)
    }
}
