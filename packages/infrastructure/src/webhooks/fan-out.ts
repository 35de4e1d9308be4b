import { SqlClient } from "@effect/sql"
import { type Duration, Effect } from "effect"
import type { LogListener } from "../consumers/log-listener.js"
import { runConsumer } from "../consumers/run-consumer.js"
import { LOG_CHANNEL } from "../event-store/log-notifier.js"
import type { RecordedEvent } from "../event-store/recorded-event.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { inBatches } from "../projections/row-batches.js"

/** The name of the consumer that turns public events into first delivery attempts. */
export const WEBHOOK_FANOUT_CONSUMER = "webhook-fanout"

/** The payload of the NOTIFY that tells dispatchers new attempts are due (on the log's channel). */
export const DELIVERIES_DUE_NOTICE = "webhook-deliveries"

interface Subscription {
  readonly event_id: string
  readonly partner_id: string
  readonly endpoint_id: string
}

/**
 * For `runConsumer`: every event of the batch that was published (has a `public_events` row) gets a first
 * attempt, pending and due now, for every enabled endpoint of its partner subscribed to its type (an empty
 * type list subscribes to all). Written in the batch's transaction, so exactly once with the checkpoint. A
 * NOTIFY in that transaction wakes the dispatchers when it commits.
 */
export const fanOutHandler = (events: ReadonlyArray<RecordedEvent>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const subscriptions = yield* sql.unsafe<Subscription & object>(
      `SELECT pe.id AS event_id, pe.partner_id, e.id AS endpoint_id
       FROM public_events pe
       JOIN webhook_endpoints e ON e.partner_id = pe.partner_id AND e.enabled
         AND (e.event_types = '[]'::jsonb OR e.event_types @> jsonb_build_array(pe.type))
       WHERE pe.id = ANY($1::uuid[])
       ORDER BY pe.global_position, e.id`,
      [events.map((event) => event.eventId)],
    )
    if (subscriptions.length === 0) return
    yield* inBatches(subscriptions, 1000, (batch) =>
      sql.unsafe(
        `INSERT INTO webhook_deliveries (id, partner_id, endpoint_id, event_id, attempt, status, next_attempt_at)
         SELECT id, partner_id, endpoint_id, event_id, 1, 'pending', now()
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[]) AS s(id, partner_id, endpoint_id, event_id)`,
        [
          batch.map(() => uuidV7()),
          batch.map((row) => row.partner_id),
          batch.map((row) => row.endpoint_id),
          batch.map((row) => row.event_id),
        ],
      ),
    )
    yield* sql`SELECT pg_notify(${LOG_CHANNEL}, ${DELIVERIES_DUE_NOTICE})`
  }).pipe(Effect.withSpan("webhooks.fanOut", { attributes: { events: events.length } }))

/** How the fan-out consumer paces itself. */
export interface FanOutOptions {
  readonly batchSize?: number
  readonly pollInterval?: Duration.DurationInput
}

/**
 * Runs the fan-out consumer until interrupted (fork it): one instance across every process works, the others
 * stand by (see `runConsumer`).
 */
export const runWebhookFanOut = (
  options: FanOutOptions = {},
): Effect.Effect<never, never, SqlClient.SqlClient | LogListener> =>
  runConsumer({
    name: WEBHOOK_FANOUT_CONSUMER,
    handle: fanOutHandler,
    batchSize: options.batchSize ?? 500,
    pollInterval: options.pollInterval ?? "1 second",
  })
