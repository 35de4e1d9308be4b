import {
  DEFAULT_FULFILMENT_DELAY,
  DEFAULT_PARTNER_CONCURRENCY,
  DEFAULT_RETRY_SCHEDULE,
  MAX_DISPATCH_CONCURRENCY,
  parseRetrySchedule,
} from "@points/infrastructure"
import { Config, ConfigError, Duration, Either } from "effect"

/** The projections' settings (DESIGN.md section 8), read from the environment and validated at start. */
export interface ProjectionSettings {
  /** FULFILMENT_DELAY_MS: how long a sandbox order stays pending, then processing. */
  readonly fulfilmentDelay: Duration.Duration
  /** FULFILMENT_CONCURRENCY: how many fulfilment steps this process works on at once. */
  readonly fulfilmentConcurrency: number
  /** WEBHOOK_RETRY_SCHEDULE: seconds before each delivery attempt, the first 0. */
  readonly webhookRetrySchedule: ReadonlyArray<number>
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: deliver to private and loopback addresses too (local development). */
  readonly webhookAllowPrivateTargets: boolean
  /** WEBHOOK_PARTNER_CONCURRENCY: the most attempts of one partner in flight, across every dispatcher. */
  readonly webhookPartnerConcurrency: number
}

const ONE_DAY_MS = 86_400_000

/** Fulfilment loops per process by default: one step at a time fell behind a sandbox load test. */
const DEFAULT_FULFILMENT_CONCURRENCY = 4

/** Reads and validates every setting of the projections; a bad value fails start naming the variable. */
export const projectionSettings: Config.Config<ProjectionSettings> = Config.all({
  fulfilmentDelay: Config.integer("FULFILMENT_DELAY_MS").pipe(
    Config.validate({
      message: `must be an integer from 0 to ${ONE_DAY_MS} (milliseconds)`,
      validation: (ms) => ms >= 0 && ms <= ONE_DAY_MS,
    }),
    Config.map(Duration.millis),
    Config.withDefault(DEFAULT_FULFILMENT_DELAY),
  ),
  fulfilmentConcurrency: Config.integer("FULFILMENT_CONCURRENCY").pipe(
    Config.validate({ message: "must be an integer from 1 to 64", validation: (n) => n >= 1 && n <= 64 }),
    Config.withDefault(DEFAULT_FULFILMENT_CONCURRENCY),
  ),
  webhookRetrySchedule: Config.string("WEBHOOK_RETRY_SCHEDULE").pipe(
    Config.mapOrFail((text) =>
      Either.mapLeft(parseRetrySchedule(text), (problem) => ConfigError.InvalidData([], problem)),
    ),
    Config.withDefault(DEFAULT_RETRY_SCHEDULE),
  ),
  webhookAllowPrivateTargets: Config.boolean("WEBHOOK_ALLOW_PRIVATE_TARGETS").pipe(Config.withDefault(false)),
  webhookPartnerConcurrency: Config.integer("WEBHOOK_PARTNER_CONCURRENCY").pipe(
    Config.validate({
      message: `must be an integer from 1 to ${MAX_DISPATCH_CONCURRENCY}`,
      validation: (n) => n >= 1 && n <= MAX_DISPATCH_CONCURRENCY,
    }),
    Config.withDefault(DEFAULT_PARTNER_CONCURRENCY),
  ),
})
