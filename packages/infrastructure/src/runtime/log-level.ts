import { Config, ConfigError, Either, LogLevel } from "effect"

/** LOG_LEVEL (default INFO), validated like every setting: a misspelt level fails start instead of logging at INFO. */
export const logLevelSetting: Config.Config<LogLevel.LogLevel> = Config.string("LOG_LEVEL").pipe(
  Config.withDefault("INFO"),
  Config.mapOrFail((label) => {
    const level = LogLevel.allLevels.find((candidate) => candidate.label === label.toUpperCase())
    return level === undefined
      ? Either.left(
          ConfigError.InvalidData(
            ["LOG_LEVEL"],
            `must be one of ${LogLevel.allLevels.map((candidate) => candidate.label).join(", ")}`,
          ),
        )
      : Either.right(level)
  }),
)
