import { Command, Options } from "@effect/cli"
import {
  DEFAULT_REBUILD_BATCH_SIZE,
  MAX_REBUILD_BATCH_SIZE,
  type RebuildProgress,
  type RebuildResult,
  rebuildReadModels,
  type VerifyResult,
  verifyReadModels,
} from "@points/infrastructure"
import { SingleBar } from "cli-progress"
import { Effect, Option, Schema } from "effect"
import { CommandFailed, ExitCode } from "./command-failure.js"
import { checked, json } from "./options.js"
import { type OutputMode, printFields, printJson, printTable } from "./output.js"
import { runAdmin } from "./run-admin.js"

const batchSize = Options.integer("batch-size").pipe(
  Options.withDescription(
    `Events read, and rows written, per statement (1 to ${MAX_REBUILD_BATCH_SIZE}; default ${DEFAULT_REBUILD_BATCH_SIZE}).`,
  ),
  Options.optional,
)

const BatchSize = Schema.Int.pipe(
  Schema.between(1, MAX_REBUILD_BATCH_SIZE, {
    message: () => `must be an integer from 1 to ${MAX_REBUILD_BATCH_SIZE}`,
  }),
)

// A bad size is refused (GH1006 naming the option) before the database is opened.
const rebuildOptions = (size: Option.Option<number>) =>
  Option.match(size, {
    onNone: () => Effect.succeed({}),
    onSome: (value) => Effect.map(checked(BatchSize, "batch-size")(value), (valid) => ({ batchSize: valid })),
  })

// The bar goes to stderr, so stdout keeps only the result (and `--json` stays parseable); cli-progress draws
// nothing when stderr is not a terminal, where only the final figures matter.
const withProgressBar = <A, E, R>(
  mode: OutputMode,
  run: (onProgress: (progress: RebuildProgress) => Effect.Effect<void>) => Effect.Effect<A, E, R>,
) =>
  mode.json
    ? run(() => Effect.void)
    : Effect.acquireUseRelease(
        Effect.sync(() => {
          const bar = new SingleBar({
            stream: process.stderr,
            format: "rebuilding [{bar}] {percentage}% | {value}/{total} events | {eta_formatted} left",
            hideCursor: true,
          })
          bar.start(0, 0)
          return bar
        }),
        (bar) =>
          run(({ read, total }) =>
            Effect.sync(() => {
              bar.setTotal(total)
              bar.update(read)
            }),
          ),
        (bar) => Effect.sync(() => bar.stop()),
      )

// The figures as both outputs name them (snake_case, as every other JSON of the CLI and the API).
const rebuildFigures = (result: RebuildResult) => ({
  events: result.events,
  folded_events: result.foldedEvents,
  streams: result.streams,
  seconds: Math.round(result.seconds * 100) / 100,
  events_per_second: result.eventsPerSecond,
  rows: result.rows,
})

const printRebuild = (result: RebuildResult) => {
  const figures = rebuildFigures(result)
  return Effect.zipRight(
    printFields("Read models rebuilt", [
      ["events", figures.events],
      ["folded_events", figures.folded_events],
      ["streams", figures.streams],
      ["seconds", figures.seconds.toFixed(2)],
      ["events_per_second", figures.events_per_second],
    ]),
    printTable(
      ["TABLE", "ROWS"],
      Object.entries(result.rows).map(([table, rows]) => [table, rows]),
      "No read models.",
    ),
  )
}

/** `projections rebuild [--batch-size n]`. */
const rebuild = Command.make("rebuild", { batchSize, json }, ({ batchSize, json }) =>
  runAdmin(
    { json },
    Effect.flatMap(rebuildOptions(batchSize), (options) =>
      withProgressBar({ json }, (onProgress) => rebuildReadModels({ ...options, onProgress })),
    ),
    printRebuild,
    (result) => printJson(rebuildFigures(result)),
  ),
).pipe(
  Command.withDescription(
    "Rebuild every read model from the event log in one transaction (writers wait meanwhile); prints events per second at the end.",
  ),
)

// A verification that found drift still printed its figures; the exit code says so to scripts.
const exitOnDrift = (result: VerifyResult) =>
  result.consistent ? Effect.void : Effect.fail(new CommandFailed({ exitCode: ExitCode.drift }))

const verifyFigures = (result: VerifyResult) => ({
  consistent: result.consistent,
  events: result.events,
  seconds: Math.round(result.seconds * 100) / 100,
  tables: result.tables,
})

const printVerify = (result: VerifyResult) =>
  Effect.zipRight(
    printFields(result.consistent ? "Read models match the log" : "Read models DIFFER from the log", [
      ["events", result.events],
      ["seconds", (Math.round(result.seconds * 100) / 100).toFixed(2)],
    ]),
    printTable(
      ["TABLE", "EXPECTED", "MISSING", "UNEXPECTED", "FIRST KEYS"],
      Object.entries(result.tables).map(([table, v]) => [
        table,
        v.expected,
        v.missing,
        v.unexpected,
        v.examples.join(" ") || "-",
      ]),
      "No read models.",
    ),
  )

/** `projections verify [--batch-size n]`. */
const verify = Command.make("verify", { batchSize, json }, ({ batchSize, json }) =>
  runAdmin(
    { json },
    Effect.flatMap(rebuildOptions(batchSize), verifyReadModels),
    (result) => Effect.zipRight(printVerify(result), exitOnDrift(result)),
    (result) => Effect.zipRight(printJson(verifyFigures(result)), exitOnDrift(result)),
  ),
).pipe(
  Command.withDescription(
    `Check every read model against the event log, changing and locking nothing (one snapshot; writers carry on); exits ${ExitCode.drift} when a row is missing, different or unexpected.`,
  ),
)

/** `projections …`: maintenance of the read models. */
export const projectionsCommand = Command.make("projections").pipe(
  Command.withDescription("Read models projected from the event log."),
  Command.withSubcommands([rebuild, verify]),
)
