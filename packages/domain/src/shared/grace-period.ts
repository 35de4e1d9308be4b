import { Schema } from "effect"

/** How long a replaced secret keeps working after a rotation, in seconds (0: it stops at once). */
export const GracePeriodSeconds = Schema.Int.pipe(
  Schema.nonNegative({ message: () => "must be a non-negative number of seconds" }),
  Schema.annotations({ identifier: "GracePeriodSeconds" }),
)
export type GracePeriodSeconds = typeof GracePeriodSeconds.Type
