import { Schema } from "effect"

// Webhook signing secrets must stay revocable and purgeable, which the immutable event log is not: events
// carry only this reference, and the infrastructure keeps the `whsec_` values under it.
const uuidV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** The reference to a webhook endpoint's signing secret, whose value lives outside the event log. */
export const SigningSecretId = Schema.String.pipe(
  Schema.pattern(uuidV7, { message: () => "must be a UUID v7" }),
  Schema.brand("SigningSecretId"),
  Schema.annotations({ identifier: "SigningSecretId", description: "SigningSecretId: a lowercase UUID v7" }),
)
export type SigningSecretId = typeof SigningSecretId.Type

/** How long a replaced signing secret keeps signing after a rotation, in seconds (0: it stops at once). */
export const GracePeriodSeconds = Schema.Int.pipe(
  Schema.nonNegative({ message: () => "must be a non-negative number of seconds" }),
  Schema.annotations({ identifier: "GracePeriodSeconds" }),
)
