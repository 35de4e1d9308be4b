import { Schema } from "effect"

/** The longest a replaced secret may keep working after a rotation: 30 days, in seconds. */
export const MAX_GRACE_PERIOD_SECONDS = 30 * 86_400

/** How long a replaced secret keeps working after a rotation, in seconds (0: it stops at once). */
export const GracePeriodSeconds = Schema.Int.pipe(
  Schema.between(0, MAX_GRACE_PERIOD_SECONDS, {
    message: () => `must be an integer from 0 to ${MAX_GRACE_PERIOD_SECONDS}`,
  }),
  Schema.annotations({ identifier: "GracePeriodSeconds" }),
)
export type GracePeriodSeconds = typeof GracePeriodSeconds.Type
