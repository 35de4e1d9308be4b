import { Metric } from "effect"

const batches = Metric.counter("write_batches_total", {
  description: "Write batches run, by outcome: committed, or rolled back (its requests then ran alone).",
  incremental: true,
})
const requests = Metric.counter("write_batch_requests_total", {
  description:
    "Requests handed to the write batcher, by result: committed in a batch, in progress (IK1002: an earlier request of the batch had the key), refused by their rate limit before the batch (rate_limited), or run alone.",
  incremental: true,
})

/** The write batcher's counters: batches by outcome, requests by result (their ratio is the batch size). */
export const batchMetric = {
  batches: (outcome: "committed" | "rolled_back") => Metric.tagged(batches, "outcome", outcome),
  requests: (result: "committed" | "in_progress" | "run_alone" | "rate_limited") =>
    Metric.tagged(requests, "result", result),
}
