import { Args, Options } from "@effect/cli"
import { GracePeriodSeconds, InvalidParams, idAsIssued, Label } from "@points/domain"
import { Effect, ParseResult, Schema } from "effect"

/** `--json`: machine output (JSON on stdout) instead of the human-readable one. */
export const json = Options.boolean("json").pipe(Options.withDescription("Print JSON (machine output)."))

/** `--limit`: the page size of a list (1..100, as the admin API). */
export const limit = Options.integer("limit").pipe(
  Options.withDescription("How many to show (1 to 100; default 20)."),
  Options.optional,
)

/** `--cursor`: the page to show, from the previous page's `next_cursor`. */
export const cursor = Options.text("cursor").pipe(
  Options.withDescription("Show the page after this cursor (printed by the previous page)."),
  Options.optional,
)

/** `<partner_id>` (a UUID in any letter case, as the admin API takes it). */
export const partnerId = Args.text({ name: "partner_id" }).pipe(
  Args.withDescription("The partner's id."),
  Args.map(idAsIssued),
)

/** `<client_id>` (a UUID in any letter case, as the admin API takes it). */
export const clientId = Args.text({ name: "client_id" }).pipe(
  Args.withDescription("The credential's client id."),
  Args.map(idAsIssued),
)

/**
 * An option's value checked by the domain's own schema (the rule the admin API applies): GH1006 naming the
 * option when broken, before the database is opened.
 */
export const checked =
  <A, I>(schema: Schema.Schema<A, I>, field: string) =>
  (value: I): Effect.Effect<A, InvalidParams> =>
    Effect.mapError(Schema.decodeUnknown(schema)(value), (error) => {
      const problem = ParseResult.ArrayFormatter.formatErrorSync(error)[0]?.message ?? "is invalid"
      return new InvalidParams({ field, problem })
    })

/** A partner's or credential's name, as the domain's Label takes it (1..200 characters, visible, no control character). */
export const label = (field: string, value: string) => checked(Label, field)(value)

/** A grace period of a secret rotation (seconds, 0 or more). */
export const gracePeriod = checked(GracePeriodSeconds, "grace-seconds")
