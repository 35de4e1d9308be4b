import type { SqlClient } from "@effect/sql"
import { type InlineProjection, InlineProjectionLive, LogNotifier } from "@points/infrastructure"
import { Effect, Layer } from "effect"
import { AdminDatabaseLive } from "./admin-database.js"
import { type CommandFailed, reportFailure } from "./command-failure.js"
import { type OutputMode, printJson } from "./output.js"

// Writes project their read models inline, as in the server. No NOTIFY: admin events (partners, credentials)
// have no consumer that waits for them, and consumers poll anyway.
const AdminWriteSideLive = Layer.provideMerge(
  Layer.merge(InlineProjectionLive, LogNotifier.none),
  AdminDatabaseLive,
)

/**
 * Runs one admin operation against the database (opened for this command only, so `--help` never starts
 * one) and prints its result: `human` for people, the value as JSON with `--json`. Every failure is printed
 * and turned into `CommandFailed`.
 */
export const runAdmin = <A, E>(
  mode: OutputMode,
  operation: Effect.Effect<A, E, SqlClient.SqlClient | InlineProjection | LogNotifier>,
  human: (value: A) => Effect.Effect<void, CommandFailed>,
  json: (value: A) => Effect.Effect<void, CommandFailed> = printJson,
) =>
  operation.pipe(
    Effect.provide(AdminWriteSideLive),
    Effect.matchEffect({
      onFailure: reportFailure(mode),
      onSuccess: (value) => (mode.json ? json(value) : human(value)),
    }),
  )
