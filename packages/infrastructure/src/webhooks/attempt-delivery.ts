import { Effect, Either } from "effect"
import type { ClaimedDelivery } from "./claim-deliveries.js"
import type { DispatcherSettings } from "./dispatcher-options.js"
import { webhookBodyOf } from "./public-event-payload.js"
import type { AttemptResult } from "./record-attempt.js"
import { retryAfterSeconds } from "./retry-after.js"
import { secondsUntilNextAttempt } from "./retry-schedule.js"
import { type SendOutcome, sendWebhook } from "./send-webhook.js"
import { signWebhook } from "./sign-webhook.js"

// PostgreSQL text cannot hold NUL, and a receiver's error page may contain anything.
const printable = (text: string) => text.replaceAll("\u0000", "")

/** The result of an attempt not made, saying why. */
export const notMade = (error: string): AttemptResult => ({
  status: "failed",
  responseStatus: null,
  durationMs: null,
  error,
  nextInSeconds: null,
  disable: null,
  made: false,
})

/** What an outcome means for the delivery: only a 2xx succeeds; a 410 disables; anything else is retried. */
export const resultOf = (
  claim: ClaimedDelivery,
  outcome: SendOutcome,
  settings: DispatcherSettings,
): AttemptResult => {
  if (outcome._tag === "NoAnswer") {
    return {
      status: "failed",
      responseStatus: null,
      durationMs: outcome.durationMs,
      error: printable(outcome.error),
      nextInSeconds: secondsUntilNextAttempt(settings.retrySchedule, claim.schedule_step, null),
      disable: null,
      made: true,
    }
  }
  const { status, durationMs } = outcome
  if (status >= 200 && status <= 299) {
    return {
      status: "succeeded",
      responseStatus: status,
      durationMs,
      error: null,
      nextInSeconds: null,
      disable: null,
      made: true,
    }
  }
  const body = printable(outcome.body).trim()
  const gone = status === 410
  return {
    status: "failed",
    responseStatus: status,
    durationMs,
    error: body === "" ? `HTTP ${status}` : `HTTP ${status}: ${body}`,
    nextInSeconds: gone
      ? null
      : secondsUntilNextAttempt(
          settings.retrySchedule,
          claim.schedule_step,
          retryAfterSeconds(outcome.retryAfter, new Date()),
        ),
    disable: gone ? "gone" : null,
    made: true,
  }
}

/**
 * Makes one claimed attempt: an endpoint deleted or disabled since gets none (the attempt ends failed,
 * saying why); otherwise the public event is sent, signed with every secret that signs now, and the outcome
 * is turned into the attempt's result.
 */
export const attemptDelivery = (
  claim: ClaimedDelivery,
  settings: DispatcherSettings,
): Effect.Effect<AttemptResult> => {
  if (claim.url === null) return Effect.succeed(notMade("not attempted: the endpoint was deleted"))
  if (claim.enabled !== true) return Effect.succeed(notMade("not attempted: the endpoint is disabled"))
  const secrets = [claim.secret, ...claim.previous_secrets].filter((secret) => secret !== null)
  if (secrets.length === 0)
    return Effect.succeed(notMade("not attempted: the endpoint has no signing secret"))
  const rendered = webhookBodyOf({
    id: claim.event_id,
    type: claim.event_type,
    occurred_at: claim.occurred_at,
    data: claim.data,
  })
  if (Either.isLeft(rendered)) return Effect.succeed(notMade(`not attempted: ${rendered.left}`))
  const body = rendered.right
  return Effect.map(
    sendWebhook({
      url: claim.url,
      body,
      headers: signWebhook(claim.event_id, new Date(), body, secrets),
      timeout: settings.sendTimeout,
      allowPrivateTargets: settings.allowPrivateTargets,
    }),
    (outcome) => resultOf(claim, outcome, settings),
  )
}
