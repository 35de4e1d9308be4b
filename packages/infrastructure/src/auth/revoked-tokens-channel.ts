import { LOG_CHANNEL } from "../event-store/log-notifier.js"

/**
 * Where a revocation says, at its commit, which tokens it revoked (`revoked-token:<hash>` each), so that every
 * API process forgets them at once instead of honouring them until its cache entry ends. The log's channel:
 * @effect/sql-pg runs every LISTEN of a client on one connection, and two listeners each restarting it when
 * deaf would keep handing each other the dead one.
 */
export const REVOKED_TOKENS_CHANNEL = LOG_CHANNEL

/** The payload that names one revoked token's hash. */
export const REVOKED_TOKEN_PREFIX = "revoked-token:"
