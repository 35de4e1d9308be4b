import { DEFAULT_FULFILMENT_DELAY } from "@points/infrastructure"
import { Config, Duration } from "effect"

/** The projections' settings (DESIGN.md section 8), read from the environment and validated at start. */
export interface ProjectionSettings {
  /** FULFILMENT_DELAY_MS: how long a sandbox order stays pending, then processing. */
  readonly fulfilmentDelay: Duration.Duration
}

const ONE_DAY_MS = 86_400_000

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
})
