import { ApiError, CurrentPrincipal, type Principal } from "@points/http-api"
import type { RequestContext } from "@points/infrastructure"
import { Effect, FiberRef } from "effect"
import { apiErrorOf, isPlatformError } from "./api-error-of.js"
import { currentRequestId } from "./request-context.js"

/**
 * The one way a handler answers failures: an ApiError as is, a domain refusal as its code and status, and
 * anything else (a database failure) as a defect, which the error middleware logs and answers 500/503.
 */
export const answer = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, ApiError, R> =>
  Effect.catchAll(effect, (error) =>
    error instanceof ApiError
      ? Effect.fail(error)
      : isPlatformError(error)
        ? Effect.fail(apiErrorOf(error))
        : Effect.die(error),
  )

/** The request context of a partner request that takes no Idempotency-Key (GET, PATCH, DELETE). */
export const contextOf = (principal: Principal): Effect.Effect<RequestContext> =>
  Effect.map(FiberRef.get(currentRequestId), (requestId) => ({
    partnerId: principal.partnerId,
    requestId,
    idempotencyKey: null,
  }))

/** Runs a partner request that takes no Idempotency-Key with its context, answering failures with `answer`. */
export const forPartner = <A, E, R>(run: (context: RequestContext) => Effect.Effect<A, E, R>) =>
  answer(Effect.flatMap(Effect.flatMap(CurrentPrincipal, contextOf), run))
