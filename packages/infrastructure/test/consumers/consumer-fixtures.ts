import { SqlClient } from "@effect/sql"
import { Partner, PartnerId } from "@points/domain"
import { Duration, Effect, Schedule } from "effect"
import {
  appendToStream,
  consumerStats,
  ExpectedVersion,
  partnerStream,
  type RecordedEvent,
} from "../../src/index.js"
import { at, contextFor } from "../fixtures.js"

/** Appends `count` events in one transaction to a partner's stream, whatever its version. */
export const appendEvents = (partnerId: string, count = 1) =>
  appendToStream({
    streamId: partnerStream(partnerId).streamId,
    expected: ExpectedVersion.Any(),
    events: Array.from({ length: count }, (_, n) =>
      Partner.PartnerRegistered.make({ partnerId: PartnerId.make(partnerId), name: `p${n}`, at }),
    ),
    catalog: Partner.partnerEvents,
    context: contextFor(partnerId),
  })

/** The table test handlers write to: one row per event handled, in the order handled (seq). */
export const createHandledTable = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql`
    CREATE TABLE IF NOT EXISTS handled (
      seq              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      consumer         text NOT NULL,
      runner           text NOT NULL,
      event_id         uuid NOT NULL,
      transaction_id   xid8 NOT NULL,
      global_position  bigint NOT NULL
    )`,
)

/** A handler that records every event it is given, in the consumer's transaction. */
export const recordHandled =
  (consumer: string, runner = "only") =>
  (events: ReadonlyArray<RecordedEvent>) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.unsafe(
        `INSERT INTO handled (consumer, runner, event_id, transaction_id, global_position)
         SELECT $1, $2, e.id, e.tx::xid8, e.pos::bigint
         FROM unnest($3::uuid[], $4::text[], $5::text[]) WITH ORDINALITY AS e(id, tx, pos, n)
         ORDER BY e.n`,
        [
          consumer,
          runner,
          events.map((e) => e.eventId),
          events.map((e) => String(e.transactionId)),
          events.map((e) => String(e.globalPosition)),
        ],
      ),
    )

/** What a consumer's handler recorded, in the order it handled it. */
export const handledBy = (consumer: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ event_id: string; runner: string; transaction_id: string; global_position: string }>`
      SELECT event_id, runner, transaction_id::text AS transaction_id, global_position::text AS global_position
      FROM handled WHERE consumer = ${consumer} ORDER BY seq`,
  )

/** Every event of the log, in commit order (transaction id, then position). */
export const logInCommitOrder = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ event_id: string }>`SELECT event_id FROM events ORDER BY transaction_id, global_position`,
)

/** Waits, reading the counter every 5 ms for at most 5 s, until a consumer's counter reaches `atLeast`. */
export const waitForStat = (
  consumer: string,
  stat: "reads" | "events" | "failures" | "lockRefusals",
  atLeast: number,
) =>
  consumerStats(consumer).pipe(
    Effect.repeat({
      until: (stats) => stats[stat] >= atLeast,
      schedule: Schedule.spaced("5 millis"),
    }),
    Effect.timeoutFail({
      duration: Duration.seconds(5),
      onTimeout: () => new Error(`consumer ${consumer}: ${stat} did not reach ${atLeast} in 5 s`),
    }),
  )
