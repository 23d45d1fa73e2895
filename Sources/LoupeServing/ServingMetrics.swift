import Prometheus

/// What the OpenAI endpoint has done, as `GET /metrics` shows it in Prometheus' text format
/// (swift-prometheus' registry): requests answered by HTTP status, prompt and generated tokens,
/// the sequences queued or generating, time to first token and the time between tokens as
/// histograms (seconds), and the key/value cache blocks in use where the scheduler's cache is
/// paged. Names follow vLLM's and llama-server's where they have one, under `loupe_serve_`.
///
/// Thread-safe: swift-prometheus' metrics are atomic or locked, and every handler shares one.
final class ServingMetrics: Sendable {
    /// Seconds, from a cached prompt's few milliseconds to a long one queued behind others.
    static let timeToFirstTokenBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
    /// Seconds between two tokens of one sequence: SmolLM2 on a CPU core decodes in a few milliseconds.
    static let interTokenBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private let registry = PrometheusCollectorRegistry()
    private let scheduler: any CompletionScheduler
    private let promptTokens: Counter
    private let generatedTokens: Counter
    private let queueDepth: Gauge
    private let timeToFirstToken: ValueHistogram
    private let interToken: ValueHistogram

    init(scheduler: any CompletionScheduler) {
        self.scheduler = scheduler
        promptTokens = registry.makeCounter(
            name: "loupe_serve_prompt_tokens_total", help: "Prompt tokens of the requests queued.")
        generatedTokens = registry.makeCounter(
            name: "loupe_serve_generated_tokens_total", help: "Tokens generated, every choice of every request.")
        queueDepth = registry.makeGauge(
            name: "loupe_serve_queue_depth", help: "Sequences queued or generating now.")
        timeToFirstToken = registry.makeValueHistogram(
            name: "loupe_serve_time_to_first_token_seconds", buckets: Self.timeToFirstTokenBuckets,
            help: "From a request's arrival to its first generated token.")
        interToken = registry.makeValueHistogram(
            name: "loupe_serve_inter_token_latency_seconds", buckets: Self.interTokenBuckets,
            help: "Between two consecutive tokens of one sequence.")
    }

    /// A request answered with HTTP `status` (499: the client left before its answer).
    func answered(status: Int) {
        registry.makeCounter(
            name: "loupe_serve_requests_total", labels: [("status", String(status))],
            help: "Requests answered, by HTTP status (499: the client went away first)."
        ).increment()
    }

    /// `count` sequences of a `promptTokens`-token prompt were queued.
    func queued(_ count: Int, promptTokens tokens: Int) {
        queueDepth.increment(by: Double(count))
        promptTokens.increment(by: Int64(tokens * count))
    }

    /// `count` queued sequences ended (finished, failed or cancelled) and their request let them go.
    func left(_ count: Int) { queueDepth.decrement(by: Double(count)) }

    /// A request's tokens and latencies, once it has ended.
    func record(_ exchange: Exchange) {
        generatedTokens.increment(by: Int64(exchange.completionTokens))
        if let first = exchange.firstTokenNs {
            timeToFirstToken.record(Double(first - exchange.startedNs) / 1e9)
        }
        for gap in exchange.tokenGapsNs { interToken.record(Double(gap) / 1e9) }
    }

    /// The text `/metrics` answers with (`text/plain; version=0.0.4`).
    func exposition() -> String {
        // Only a paged cache has blocks to count; a contiguous one shows none rather than zeros.
        if let usage = scheduler.keyValueBlocks {
            registry.makeGauge(
                name: "loupe_serve_kv_blocks_in_use", help: "Key/value cache blocks held by running sequences."
            ).set(to: Double(usage.inUse))
            registry.makeGauge(name: "loupe_serve_kv_blocks", help: "Key/value cache blocks in the pool.").set(
                to: Double(usage.total))
        }
        return registry.emitToString()
    }
}
