import { Effect, Metric } from "effect"

const attemptsMade = Metric.counter("webhook_delivery_attempts_total", {
  description:
    "Webhook attempts recorded, by outcome: succeeded, failed, cut_off (its dispatcher stopped or its lease ran out unrecorded: outcome unknown), lost (another dispatcher recorded it first).",
  incremental: true,
})

const outcomes = ["succeeded", "failed", "cut_off", "lost"] as const

/** The counter of recorded webhook attempts with this outcome. */
export const attemptsRecorded = (outcome: (typeof outcomes)[number]) =>
  Metric.tagged(attemptsMade, "outcome", outcome)

/**
 * Every outcome's counter shown from the start, at 0 until it happens: an alert on `lost` or `cut_off` has a
 * series to watch before the first one.
 */
export const listAttemptOutcomes = Effect.forEach(
  outcomes,
  (outcome) => Metric.incrementBy(attemptsRecorded(outcome), 0),
  { discard: true },
)
