import { isIP } from "node:net"
import { Config, ConfigError, Context, Effect, Either, Layer, Option, Redacted } from "effect"

/** The API's settings (DESIGN.md section 8), read from the environment and validated at start. */
export interface ApiSettings {
  readonly port: number
  readonly host: string
  readonly adminToken: Option.Option<Redacted.Redacted>
  readonly tokenTtlSeconds: number
  readonly tokenCacheSeconds: number
  readonly idempotencyTtlSeconds: number
  readonly idempotencyLeaseSeconds: number
  readonly rateLimitPerSecond: number
  readonly rateLimitBurst: number
  /**
   * TOKEN_RATE_LIMIT_PER_ADDRESS: token endpoint requests a second per source network (burst twice that; an
   * IPv6 /48's networks together twice as many), 0 for none (behind a proxy every caller has the proxy's
   * address).
   */
  readonly tokenRateLimitPerAddress: number
  /**
   * AUTH_FAILURE_LIMIT_PER_ADDRESS: failed bearer and admin authentications a second per source network (over
   * 10-second windows; an IPv6 /48's networks together twice as many), in each API process; past it the
   * network's credentials go unchecked (429) until its window ends; 0 for none.
   */
  readonly authFailureLimitPerAddress: number
  readonly tlsCertFile: Option.Option<string>
  readonly tlsKeyFile: Option.Option<string>
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: accept private, loopback and plain-http webhook targets (local development). */
  readonly webhookAllowPrivateTargets: boolean
  /** HOUSEKEEPING_INTERVAL_SECONDS: how often expired keys, tokens and idle rate-limit rows are deleted. */
  readonly housekeepingIntervalSeconds: number
}

const positiveInt = (name: string, fallback: number, max: number) =>
  Config.integer(name).pipe(
    Config.validate({
      message: `must be an integer from 1 to ${max}`,
      validation: (n) => n >= 1 && n <= max,
    }),
    Config.withDefault(fallback),
  )

const nonNegativeInt = (name: string, fallback: number, max: number) =>
  Config.integer(name).pipe(
    Config.validate({
      message: `must be an integer from 0 to ${max}`,
      validation: (n) => n >= 0 && n <= max,
    }),
    Config.withDefault(fallback),
  )

// An address to listen on: an IP literal, or a host name of RFC 1123 labels (resolved when the server starts).
const isHost = (host: string) =>
  isIP(host) !== 0 ||
  (host.length <= 253 &&
    host.split(".").every((label) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label)))

const isAdminToken = (token: Redacted.Redacted) => /^[A-Za-z0-9\-._~+/]{16,}=*$/.test(Redacted.value(token))

/** Reads and validates every setting; a bad value fails start with a message naming the variable. */
// The certificate and its key, set together or not at all; checked with the other settings, so that one line
// names every bad value.
const tlsFiles = Config.all({
  tlsCertFile: Config.option(Config.string("TLS_CERT_FILE")),
  tlsKeyFile: Config.option(Config.string("TLS_KEY_FILE")),
}).pipe(
  Config.mapOrFail((files) => {
    if (Option.isSome(files.tlsCertFile) === Option.isSome(files.tlsKeyFile)) return Either.right(files)
    const [missing, set] = Option.isSome(files.tlsCertFile)
      ? ["TLS_KEY_FILE", "TLS_CERT_FILE"]
      : ["TLS_CERT_FILE", "TLS_KEY_FILE"]
    return Either.left(
      ConfigError.InvalidData(
        [missing],
        `must be set with ${set}: TLS_CERT_FILE and TLS_KEY_FILE go together`,
      ),
    )
  }),
)

export const apiSettings: Config.Config<ApiSettings> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  host: Config.string("HOST").pipe(
    Config.validate({
      message: "must be an IP address or a host name (letters, digits, hyphens and dots)",
      validation: isHost,
    }),
    Config.withDefault("0.0.0.0"),
  ),
  adminToken: Config.option(Config.redacted("ADMIN_TOKEN")).pipe(
    // Named here: the provider adds no variable's name to a failure of a redacted value. A bearer token's
    // characters (RFC 6750 b64token), or no Authorization header could carry it.
    Config.mapOrFail((token) =>
      Option.match(token, { onNone: () => true, onSome: isAdminToken })
        ? Either.right(token)
        : Either.left(
            ConfigError.InvalidData(
              ["ADMIN_TOKEN"],
              "must be at least 16 characters of A-Z a-z 0-9 - . _ ~ + / (then optional =)",
            ),
          ),
    ),
  ),
  tokenTtlSeconds: positiveInt("TOKEN_TTL_SECONDS", 3600, 86_400 * 30),
  tokenCacheSeconds: nonNegativeInt("TOKEN_CACHE_SECONDS", 5, 60),
  idempotencyTtlSeconds: positiveInt("IDEMPOTENCY_TTL_SECONDS", 86_400, 86_400 * 7),
  idempotencyLeaseSeconds: positiveInt("IDEMPOTENCY_LEASE_SECONDS", 30, 3600),
  rateLimitPerSecond: positiveInt("RATE_LIMIT_PER_SECOND", 100, 1_000_000),
  rateLimitBurst: positiveInt("RATE_LIMIT_BURST", 200, 1_000_000),
  tokenRateLimitPerAddress: nonNegativeInt("TOKEN_RATE_LIMIT_PER_ADDRESS", 20, 100_000),
  authFailureLimitPerAddress: nonNegativeInt("AUTH_FAILURE_LIMIT_PER_ADDRESS", 10, 100_000),
  tls: tlsFiles,
  webhookAllowPrivateTargets: Config.boolean("WEBHOOK_ALLOW_PRIVATE_TARGETS").pipe(Config.withDefault(false)),
  housekeepingIntervalSeconds: positiveInt("HOUSEKEEPING_INTERVAL_SECONDS", 300, 86_400),
}).pipe(Config.map(({ tls, ...settings }) => ({ ...settings, ...tls })))

/** The partner rate limit's policy (DESIGN.md section 7), as every path that takes a partner's cell uses it. */
export const partnerRateLimitPolicy = (settings: ApiSettings) => ({
  ratePerSecond: settings.rateLimitPerSecond,
  burst: settings.rateLimitBurst,
})

/** The validated settings, as a service. */
export class Settings extends Context.Tag("@points/api/Settings")<Settings, ApiSettings>() {
  /** From the environment. */
  static readonly layer = Layer.effect(Settings, apiSettings)
  /** Given values (tests). */
  static readonly withOverrides = (overrides: Partial<ApiSettings> = {}) =>
    Layer.effect(
      Settings,
      Effect.map(apiSettings, (settings) => ({ ...settings, ...overrides })),
    )
}
