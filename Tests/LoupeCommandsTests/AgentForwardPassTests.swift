import Foundation
import LoupeAgents
import LoupeBase
import LoupeCommands
import LoupeKit
import LoupeStore
import Testing

/// Our agent's search on a corpus with embeddings runs MiniLM on its query: the forward pass is
/// recorded as spans under the search step and as kernel runs those spans name, and from the step
/// the roofline shows exactly those runs (`p` in Traces, `roofline show --trace`).
@Suite struct AgentForwardPassTests {
    @Test func aSearchStepRecordsItsQueryForwardPassAndLeadsToItOnTheRoofline() throws {
        let directory = TestEnvironment.temporaryDirectory()
        let corpus = directory + "/corpus.jsonl"
        try AgentCommandTests.corpus.write(toFile: corpus, atomically: true, encoding: .utf8)
        let session = TestEnvironment.session(directory)
        let executor = CommandExecutor(session: session, isInsideTUI: false)
        func run(_ line: String) -> CommandOutcome { executor.execute(line, reporter: .detached(), columns: 120) }
        #expect(run("ingest \(corpus)").succeeded)
        let question = "agent run \"How should heated aircraft models be built?\""
        let first = run(question)
        #expect(first.succeeded, "\(first.error ?? "")")

        let workspace = try session.workspace()
        let traces = TraceService(workspace: workspace)
        let id = try #require(try traces.list().map(\.id).max())
        let loaded = try traces.load(id)
        let search = try #require(loaded.spans.first { $0.kind == "tool" && $0.name == "search" })
        let pass = try #require(loaded.spans.first { $0.kind == "embedding" })
        #expect(pass.parentSpanID == search.spanID)
        let scopes = loaded.spans.filter { $0.parentSpanID == pass.spanID }
        #expect(scopes.map(\.name) == ["embeddings"] + (0..<6).map { "layer \($0)" })
        // Each span lies inside its parent's time; the pass is a step, its layers are not.
        #expect(pass.startNs >= search.startNs && pass.endNs! <= search.endNs!)
        for scope in scopes { #expect(scope.startNs >= pass.startNs && scope.endNs! <= pass.endNs!) }
        #expect(loaded.steps.contains(pass.ordinal))
        #expect(!scopes.contains { loaded.steps.contains($0.ordinal) })

        // One kernel run per operation, named by the pass, with the analytic FLOPs of its tokens.
        let attributes = try traces.payload(trace: id, ordinal: pass.ordinal).payload.attributes
        let tokens = try #require(attributes[ForwardPassRecord.tokensAttribute]?.number)
        let ids = try #require(attributes[ForwardPassRecord.kernelRunsAttribute]?.array).compactMap(\.number).map {
            Int64($0)
        }
        let runs = try workspace.roofline.kernelRuns(ids: ids)
        #expect(runs.count == ids.count && ids.count == 9)
        #expect(
            runs.allSatisfy {
                $0.suite == "minilm-forward" && $0.threads == 1 && $0.nanoseconds > 0
                    && $0.workload == "\(Int(tokens)) tokens (agent search)"
            })
        let qkv = try #require(runs.first { $0.kernel == "linear Q·K·V 384→3×384" })
        #expect(qkv.calls == 6 && qkv.flops == 6 * (2 * tokens * 384 * 1152 + tokens * 1152))
        // The layers' operations add up to the pass's, operation by operation.
        var byLayer: [String: Double] = [:]
        for scope in scopes {
            let held = try traces.payload(trace: id, ordinal: scope.ordinal).payload.attributes
            for operation in ForwardPassRecord.operations(held[ForwardPassRecord.operationsAttribute]) {
                byLayer[operation.name, default: 0] += operation.flops
            }
        }
        #expect(byLayer == Dictionary(uniqueKeysWithValues: runs.map { ($0.kernel, $0.flops) }))

        // The same pass from the search step, from the pass and from one of its layers; none from
        // the model call before it.
        let focus = try traces.forwardPasses(trace: id, at: search.ordinal)
        #expect(focus.map(\.runIDs) == [ids])
        #expect(focus.first?.title == "trace \(id) · span \(search.ordinal) search → \(pass.name)")
        #expect(try traces.forwardPasses(trace: id, at: pass.ordinal).map(\.runIDs) == [ids])
        #expect(try traces.forwardPasses(trace: id, at: scopes[3].ordinal).map(\.runIDs) == [ids])
        #expect(try traces.forwardPasses(trace: id, at: 1).isEmpty)

        // A second run of the same question stores runs of the same shape; the first step still
        // leads to its own.
        #expect(run(question).succeeded)
        let model = try RooflineBrowser(workspace: workspace).model(focus: try #require(focus.first))
        #expect(model.profiles.flatMap(\.points).compactMap(\.runID).sorted() == ids.sorted())
        #expect(model.profiles.first?.name == "CPU kernels without roofs")

        let shown = run("roofline show --trace \(id)")
        #expect(shown.succeeded, "\(shown.error ?? "")")
        #expect(shown.output.contains(focus[0].title) && shown.output.contains("linear FFN up 384→1536"))
        #expect(run("roofline show --trace \(id) --span 1").error?.contains("no MiniLM forward pass") == true)
        #expect(run("roofline show --span 1").error?.contains("--trace") == true)
        #expect(run("roofline show --trace \(id) --span 999").error?.contains("no such span") == true)

        // A fork after the search keeps the pass and its layers under the search step.
        let read = try #require(loaded.spans.first { $0.kind == "tool" && $0.name == "read" })
        let forked = run("trace fork \(id) --at \(read.ordinal) --result \"heated models keep the thermal parameters\"")
        #expect(forked.succeeded, "\(forked.error ?? "")")
        let fork = try traces.load(try #require(try traces.list().map(\.id).max()))
        let kept = try #require(fork.spans.first { $0.kind == "embedding" })
        #expect(kept.parentSpanID == search.spanID)
        #expect(fork.spans.filter { $0.parentSpanID == kept.spanID }.count == 7)
    }
}
