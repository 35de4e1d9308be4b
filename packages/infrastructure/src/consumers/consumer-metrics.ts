import { Effect, Metric } from "effect"

const reads = Metric.counter("consumer_log_reads", {
  description: "Batches read from the global log, empty ones included.",
  incremental: true,
})
const events = Metric.counter("consumer_events_handled", {
  description: "Events the checkpoint moved past: handled, or skipped for their type.",
  incremental: true,
})
const failures = Metric.counter("consumer_batch_failures", {
  description: "Batches rolled back (handler or database failure), each retried.",
  incremental: true,
})
const refusals = Metric.counter("consumer_lock_refusals", {
  description: "Attempts to take a consumer's lock that found it held by another instance.",
  incremental: true,
})

/** Each consumer metric for one consumer name (tagged `consumer`). */
export const consumerMetric = {
  reads: (consumer: string) => Metric.tagged(reads, "consumer", consumer),
  events: (consumer: string) => Metric.tagged(events, "consumer", consumer),
  failures: (consumer: string) => Metric.tagged(failures, "consumer", consumer),
  lockRefusals: (consumer: string) => Metric.tagged(refusals, "consumer", consumer),
}

/** A consumer's counters in this process since it started: what it has read, handled, retried, waited for. */
export interface ConsumerStats {
  readonly reads: number
  readonly events: number
  readonly failures: number
  readonly lockRefusals: number
}

/** Reads a consumer's counters in this process (for monitoring, and for tests that wait on progress). */
export const consumerStats = (consumer: string): Effect.Effect<ConsumerStats> =>
  Effect.all({
    reads: Effect.map(Metric.value(consumerMetric.reads(consumer)), (state) => state.count),
    events: Effect.map(Metric.value(consumerMetric.events(consumer)), (state) => state.count),
    failures: Effect.map(Metric.value(consumerMetric.failures(consumer)), (state) => state.count),
    lockRefusals: Effect.map(Metric.value(consumerMetric.lockRefusals(consumer)), (state) => state.count),
  })
