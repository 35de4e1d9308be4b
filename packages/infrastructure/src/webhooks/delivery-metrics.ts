import { Metric } from "effect"

const attemptsMade = Metric.counter("webhook_delivery_attempts_total", {
  description:
    "Webhook attempts recorded, by outcome: succeeded, failed, cut_off (its dispatcher stopped or its lease ran out unrecorded: outcome unknown), lost (another dispatcher recorded it first).",
  incremental: true,
})

/** The counter of recorded webhook attempts with this outcome. */
export const attemptsRecorded = (outcome: "succeeded" | "failed" | "cut_off" | "lost") =>
  Metric.tagged(attemptsMade, "outcome", outcome)
