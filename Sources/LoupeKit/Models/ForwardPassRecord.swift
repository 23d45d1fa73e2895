import Foundation
import LoupeAgents
import LoupeBase
import LoupeModels
import LoupeStore
import LoupeTensor

/// A MiniLM forward pass timed operation by operation, recorded two ways: as kernel runs, which
/// the Roofline panel places against the measured roofs, and as spans nested under the trace step
/// that ran it (an agent's search), which name those runs, so one key goes from the step to its
/// operations on the roofline.
package enum ForwardPassRecord {
    /// On a forward pass's span: the ids of its kernel runs.
    package static let kernelRunsAttribute = "loupe.kernel_runs"
    /// On a forward pass's span and each layer's: its operations, `{name, calls, ns, flops, bytes}`.
    package static let operationsAttribute = "loupe.forward.operations"
    /// On a forward pass's span: the tokens it ran on.
    package static let tokensAttribute = "loupe.forward.tokens"

    /// The suite a forward pass's kernel runs are stored under (`embed --profile` and `bench
    /// embed --ops` use it too).
    package static func suite(_ precision: Precision) -> String {
        precision == .fp32 ? "minilm-forward" : "minilm-forward-\(precision.rawValue)"
    }

    /// A forward pass's operations as kernel runs. `threads` is what the time is summed over:
    /// the cores when batches ran concurrently, 1 for one pass timed by the wall clock.
    package static func kernelRuns(
        _ entries: [OperationProfile.Entry], precision: Precision, workload: String, threads: Int
    ) -> [KernelRun] {
        let machine = KernelRun.thisMachine
        let measuredAt = Date()
        return entries.map { entry in
            KernelRun(
                suite: suite(precision), kernel: entry.name, workload: workload, calls: entry.calls,
                nanoseconds: Int64(entry.nanoseconds), flops: entry.flops, bytes: entry.bytes, threads: threads,
                machine: machine, measuredAt: measuredAt)
        }
    }

    /// One operation's totals as a span attribute.
    static func operation(_ entry: OperationProfile.Entry) -> JSONValue {
        .object([
            "name": .string(entry.name), "calls": .number(Double(entry.calls)),
            "ns": .number(Double(entry.nanoseconds)), "flops": .number(entry.flops), "bytes": .number(entry.bytes),
        ])
    }

    /// One operation of a recorded pass, as a span holds it.
    package struct Operation: Hashable, Sendable {
        package var name: String
        package var calls: Int
        package var nanoseconds: Int64
        package var flops: Double
        package var bytes: Double

        package var gflopsPerSecond: Double { nanoseconds <= 0 ? 0 : flops / Double(nanoseconds) }
        package var flopsPerByte: Double { bytes == 0 ? 0 : flops / bytes }
    }

    /// The operations an attribute holds (``operationsAttribute``), in its order; malformed
    /// items are left out.
    package static func operations(_ value: JSONValue?) -> [Operation] {
        (value?.array ?? []).compactMap { item in
            guard let name = item["name"]?.string, let ns = item["ns"]?.number, ns.isFinite else { return nil }
            return Operation(
                name: name, calls: Int(max(0, min(item["calls"]?.number.flatMap { $0.isFinite ? $0 : nil } ?? 1, 1e9))),
                nanoseconds: Int64(max(0, min(ns, 1e18))), flops: item["flops"]?.number ?? 0,
                bytes: item["bytes"]?.number ?? 0)
        }
    }

    /// The pass as spans for a tool call to give back (``ToolOutput``): the pass itself (an
    /// embedding span naming `runIDs`), then its scopes (the embeddings, each layer) under it,
    /// each with the operations that ran inside it. Ids are local, times are nanoseconds from
    /// `origin` on the profile's clock. Empty when the profile kept no call.
    package static func spans(
        _ profile: OperationProfile, origin: UInt64, tokens: Int, runIDs: [Int64], precision: Precision
    ) -> [TraceSpan] {
        let calls = profile.calls
        guard let first = calls.map(\.startNs).min(), let last = calls.map(\.endNs).max() else { return [] }
        func offset(_ time: UInt64) -> Int64 { Int64(time) - Int64(origin) }
        let scopes = calls.filter(\.isScope).sorted { $0.startNs < $1.startNs }
        let operations = calls.filter { !$0.isScope }
        var pass = TraceSpan(
            spanID: "forward", parentID: nil, kind: .embedding,
            name: "MiniLM forward · \(tokens) token\(tokens == 1 ? "" : "s")" + (precision == .fp32 ? "" : " · int8"),
            startNs: offset(first), endNs: offset(last))
        pass.status = .ok
        pass.model = ModelLibrary.miniLMName
        pass.attributes[kernelRunsAttribute] = .array(runIDs.map { .number(Double($0)) })
        pass.attributes[tokensAttribute] = .number(Double(tokens))
        pass.attributes[operationsAttribute] = .array(profile.entriesByTime.map(operation))
        var spans = [pass]
        for (index, scope) in scopes.enumerated() {
            let inside = operations.filter { $0.startNs >= scope.startNs && $0.endNs <= scope.endNs }
            var span = TraceSpan(
                spanID: "forward.\(index)", parentID: "forward", kind: .other, name: scope.name,
                startNs: offset(scope.startNs), endNs: offset(scope.endNs))
            span.status = .ok
            span.attributes[operationsAttribute] = .array(totals(inside).map(operation))
            spans.append(span)
        }
        return spans
    }

    /// Calls summed by operation, in the order each first ran.
    private static func totals(_ calls: [OperationProfile.Call]) -> [OperationProfile.Entry] {
        var order: [String] = []
        var sums: [String: OperationProfile.Entry] = [:]
        for call in calls.sorted(by: { $0.startNs < $1.startNs }) {
            if sums[call.name] == nil {
                order.append(call.name)
                sums[call.name] = OperationProfile.Entry(name: call.name, calls: 0, nanoseconds: 0, flops: 0, bytes: 0)
            }
            sums[call.name]!.calls += 1
            sums[call.name]!.nanoseconds += call.endNs - call.startNs
            sums[call.name]!.flops += call.flops
            sums[call.name]!.bytes += call.bytes
        }
        return order.map { sums[$0]! }
    }
}

extension KernelRun {
    /// This machine in words, for the runs measured on it: the CPU model from /proc/cpuinfo and
    /// the cores.
    package static var thisMachine: String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            info.split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { String($0.split(separator: ":", maxSplits: 1).last ?? "").trimmingWhitespace() } ?? "unknown CPU"
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores"
    }
}
