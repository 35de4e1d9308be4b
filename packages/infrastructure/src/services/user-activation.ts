import { User, UserId } from "@points/domain"
import { Effect } from "effect"
import type { RecordedEvent } from "../event-store/recorded-event.js"
import { userStream } from "../event-store/stream-handle.js"
import { runUnitOfWork } from "./run-unit-of-work.js"

/** The name of the consumer that activates registered users (its checkpoint, lock and metrics). */
export const USER_ACTIVATION_CONSUMER = "user-activation"

/** The only events `activateUsersHandler` acts on: a consumer of it need read no others. */
export const USER_ACTIVATION_EVENT_TYPES: ReadonlyArray<string> = ["UserRegistered"]

/**
 * Activates every user registered in a batch of the global log, for `runConsumer`: each `UserRegistered`
 * becomes an `ActivateUser` on that user's stream, in the batch's transaction (so with its checkpoint). A
 * redelivered event changes nothing: the user is no longer processing, so the decider appends nothing. The
 * activation is caused by the registration and continues its conversation (causation and correlation ids).
 */
export const activateUsersHandler = (events: ReadonlyArray<RecordedEvent>) =>
  Effect.forEach(
    events,
    (recorded) => {
      if (recorded.type !== "UserRegistered") return Effect.void
      const userId = UserId.make((recorded.event as User.UserRegistered).userId)
      return runUnitOfWork(
        { user: userStream(userId) },
        (s) => Effect.map(User.decide(User.ActivateUser.make({ userId }), s.user), (user) => ({ user })),
        {
          partnerId: recorded.context.partnerId,
          requestId: recorded.context.requestId,
          idempotencyKey: null,
          causationId: recorded.eventId,
          correlationId: recorded.context.correlationId ?? recorded.eventId,
        },
      )
    },
    { discard: true },
  ).pipe(Effect.withSpan("users.activate", { attributes: { events: events.length } }))
