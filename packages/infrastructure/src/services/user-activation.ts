import { User, UserId } from "@points/domain"
import { Effect, Layer } from "effect"
import { runConsumer } from "../consumers/run-consumer.js"
import type { LogEventType } from "../event-store/log-event-type.js"
import type { RecordedEvent } from "../event-store/recorded-event.js"
import { userStream } from "../event-store/stream-handle.js"
import { runUnitOfWork } from "./run-unit-of-work.js"

/** The name of the consumer that activates registered users (its checkpoint, lock and metrics). */
export const USER_ACTIVATION_CONSUMER = "user-activation"

/** The only events `activateUsersHandler` acts on: a consumer of it need read no others. */
export const USER_ACTIVATION_EVENT_TYPES: ReadonlyArray<LogEventType & "UserRegistered"> = ["UserRegistered"]

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

/** Activates new users shortly after creation (processing -> active): a consumer of the event log. */
export const UserActivationLive = Layer.scopedDiscard(
  Effect.forkScoped(
    runConsumer({
      name: USER_ACTIVATION_CONSUMER,
      handle: activateUsersHandler,
      // Only registrations are fetched and decoded: under load nearly every event is a points movement,
      // and decoding each cost the API's one thread ~10 % of its time per answer (bench:http).
      eventTypes: USER_ACTIVATION_EVENT_TYPES,
      // Under a stream of writes, one read per interval instead of one per commit, of every event since: the
      // points movements' batches commit ~20 times a second with ~100 events each, and each read is a
      // transaction of ~8 statements whatever it reads. A quiet log is read at once: a new user is active
      // within milliseconds.
      batchSize: 2_000,
      pollInterval: "1 second",
      pacing: { interval: "200 millis", fromEvents: 50 },
    }),
  ),
)
