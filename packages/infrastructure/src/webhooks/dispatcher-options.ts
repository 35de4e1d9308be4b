import { Duration, Either } from "effect"
import { DEFAULT_RETRY_SCHEDULE, validRetrySchedule } from "./retry-schedule.js"

/** How a dispatcher delivers; every field has a default. */
export interface DispatcherOptions {
  /** Seconds before each attempt (`parseRetrySchedule` reads WEBHOOK_RETRY_SCHEDULE); Standard Webhooks' by default. */
  readonly retrySchedule?: ReadonlyArray<number>
  /** Deliver to private, loopback and link-local addresses too (WEBHOOK_ALLOW_PRIVATE_TARGETS; local use). */
  readonly allowPrivateTargets?: boolean
  /** The longest an idle dispatcher waits before it looks for due attempts again (1 second). */
  readonly pollInterval?: Duration.DurationInput
  /** Attempts made at once by this dispatcher (64): an attempt waiting on its receiver holds only a socket. */
  readonly concurrency?: number
  /**
   * The most attempts of one partner in flight at once, counted across every dispatcher (8): a partner with a
   * backlog or slow receivers never holds every slot, and the others' webhooks go out meanwhile.
   */
  readonly perPartnerConcurrency?: number
  /** How long a receiver has to answer; only a 2xx within it counts (10 seconds). */
  readonly sendTimeout?: Duration.DurationInput
  /** How long a claimed attempt is held; must exceed sendTimeout by 5 seconds at least (60 seconds). */
  readonly lease?: Duration.DurationInput
  /** An endpoint failing without a success for this long is disabled (5 days). */
  readonly disableAfterFailingFor?: Duration.DurationInput
  /** Names this dispatcher in `leased_by` and its logs (a fresh id by default). */
  readonly instanceId?: string
}

/** The options with every default applied, checked. */
export interface DispatcherSettings {
  readonly retrySchedule: ReadonlyArray<number>
  readonly allowPrivateTargets: boolean
  readonly pollInterval: Duration.Duration
  readonly concurrency: number
  readonly perPartnerConcurrency: number
  readonly sendTimeout: Duration.Duration
  readonly lease: Duration.Duration
  readonly disableAfterFailingFor: Duration.Duration
}

/**
 * Attempts a dispatcher makes at once by default: enough that a few partners whose receivers hang (each
 * holding its share for a send timeout) leave most slots to the others.
 */
export const DEFAULT_DISPATCH_CONCURRENCY = 64

/** A partner's share of attempts in flight by default (perPartnerConcurrency): an eighth of a dispatcher's slots. */
export const DEFAULT_PARTNER_CONCURRENCY = 8

/** The largest concurrency a dispatcher takes: each attempt holds a socket and, briefly, a connection. */
export const MAX_DISPATCH_CONCURRENCY = 256

/** The options with their defaults, or what is wrong with them. */
export const dispatcherSettings = (options: DispatcherOptions): Either.Either<DispatcherSettings, string> => {
  const schedule = validRetrySchedule(options.retrySchedule ?? DEFAULT_RETRY_SCHEDULE)
  if (Either.isLeft(schedule)) return Either.left(schedule.left)
  const settings: DispatcherSettings = {
    retrySchedule: schedule.right,
    allowPrivateTargets: options.allowPrivateTargets ?? false,
    pollInterval: Duration.decode(options.pollInterval ?? "1 second"),
    concurrency: options.concurrency ?? DEFAULT_DISPATCH_CONCURRENCY,
    perPartnerConcurrency: options.perPartnerConcurrency ?? DEFAULT_PARTNER_CONCURRENCY,
    sendTimeout: Duration.decode(options.sendTimeout ?? "10 seconds"),
    lease: Duration.decode(options.lease ?? "60 seconds"),
    disableAfterFailingFor: Duration.decode(options.disableAfterFailingFor ?? "5 days"),
  }
  if (!(Number.isInteger(settings.concurrency) && settings.concurrency >= 1)) {
    return Either.left(`concurrency must be an integer from 1 to ${MAX_DISPATCH_CONCURRENCY}`)
  }
  if (settings.concurrency > MAX_DISPATCH_CONCURRENCY) {
    return Either.left(`concurrency must be an integer from 1 to ${MAX_DISPATCH_CONCURRENCY}`)
  }
  if (
    !(
      Number.isInteger(settings.perPartnerConcurrency) &&
      settings.perPartnerConcurrency >= 1 &&
      settings.perPartnerConcurrency <= MAX_DISPATCH_CONCURRENCY
    )
  ) {
    return Either.left(`perPartnerConcurrency must be an integer from 1 to ${MAX_DISPATCH_CONCURRENCY}`)
  }
  if (Duration.lessThan(settings.pollInterval, Duration.millis(10))) {
    return Either.left("pollInterval must be at least 10 ms")
  }
  if (Duration.lessThan(settings.lease, Duration.sum(settings.sendTimeout, Duration.seconds(5)))) {
    return Either.left("lease must exceed sendTimeout by at least 5 seconds")
  }
  return Either.right(settings)
}
