import Foundation
import LoupeModels
import LoupeTensor
import Testing

/// An SAE ablation (`serve --ablate`) on the paged path that `BatchScheduler` runs, against the
/// contiguous forward pass that `generate --ablate` runs: the same logits bit for bit.
///
/// Steering adds a fixed vector to each row; an ablation first encodes the rows with the SAE, one
/// product over the rows the pass holds. Through sgemm that product summed a row in an order that
/// depended on how many rows came with it, and q8's 8-bit activations turned the last bit into
/// logits 0.6 apart and, two steps later, another greedy token. ``SAEIntervention`` now encodes
/// through ``FloatMatrix``, one row, one answer. Needs the model (`scripts/fetch-smollm2`).
@Suite(.serialized)
struct PagedInterventionTests {
    @Test func anAblationActsOnThePagedPathAsOnTheContiguousOne() throws {
        let plain = try SmolLM2.quantizedModel()
        let sae = SAEInterventionTests.sae()
        let intervention = SAEIntervention(sae: sae, layer: 15)
        let prompt = PagedForwardTests.prompts[1]

        // A feature that fires on the prompt, read from the plain stream after layer 15.
        let captured = LlamaResidualCapture()
        _ = try plain.hooked(captured.hook(layer: 15)).logits(for: prompt)
        let stream = try #require(captured.value)
        let (_, forward) = try #require(intervention.encode(stream, positions: Array(prompt.indices)))
        let fires = (0..<sae.width).map { j in
            stride(from: j, to: forward.codes.count, by: sae.width).filter { forward.codes[$0] > 0 }.count
        }
        let active = try #require(fires.indices.max { fires[$0] < fires[$1] })
        #expect(fires[active] > 0)

        let model = try plain.hooked(intervention.steering([], ablating: [active]))
        try PagedSerialParityTests.expectPagedAsContiguous(
            model, plain: plain, prompt, hook: "ablation", rows: "ablated")
    }
}
