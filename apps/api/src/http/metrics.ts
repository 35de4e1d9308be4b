import { Effect, Metric, MetricBoundaries, MetricState } from "effect"

/** Requests answered, by route template and status. */
export const requestCount = Metric.counter("http_requests_total", { description: "HTTP requests answered" })

/** Request latency in seconds, by route template and status. */
export const requestDuration = Metric.histogram(
  "http_request_duration_seconds",
  MetricBoundaries.exponential({ start: 0.001, factor: 2, count: 14 }),
  "HTTP request latency",
)

/** Idempotent replays answered from a recorded response. */
export const idempotencyReplays = Metric.counter("idempotency_replays_total", {
  description: "Idempotent replays",
})

/** Requests refused by the rate limit. */
export const rateLimitRejections = Metric.counter("rate_limit_rejections_total", {
  description: "429 answers",
})

const labelsOf = (tags: ReadonlyArray<{ readonly key: string; readonly value: string }>) =>
  tags.length === 0
    ? ""
    : `{${tags.map((tag) => `${tag.key}="${tag.value.replaceAll('"', '\\"')}"`).join(",")}}`

/** Every metric of this process in the Prometheus text exposition format. */
export const prometheusText = Effect.map(Metric.snapshot, (pairs) => {
  const lines: Array<string> = []
  for (const pair of pairs) {
    const name = pair.metricKey.name
    const labels = labelsOf(pair.metricKey.tags)
    const state = pair.metricState
    if (MetricState.isCounterState(state)) lines.push(`${name}${labels} ${Number(state.count)}`)
    else if (MetricState.isGaugeState(state)) lines.push(`${name}${labels} ${Number(state.value)}`)
    else if (MetricState.isHistogramState(state)) {
      const inner = labels === "" ? "" : labels.slice(1, -1)
      for (const [bound, count] of state.buckets) {
        const le = Number.isFinite(bound) ? String(bound) : "+Inf"
        lines.push(`${name}_bucket{${inner === "" ? "" : `${inner},`}le="${le}"} ${count}`)
      }
      lines.push(`${name}_sum${labels} ${state.sum}`, `${name}_count${labels} ${state.count}`)
    }
  }
  return `${lines.join("\n")}\n`
})
