import { Context, Effect } from "effect"
import type pg from "pg"

/** The connections of the process's PostgreSQL pool at one moment. */
export interface PoolUsage {
  /** Connections checked out: running a statement or holding a transaction. */
  readonly inUse: number
  /** Connections open and free. */
  readonly idle: number
  /** The most connections the pool opens (DATABASE_POOL_SIZE). */
  readonly max: number
  /** Checkouts waiting for a connection to free up (all in use, the pool at its most). */
  readonly waiting: number
}

/**
 * A read-only view of the process's PostgreSQL pool, provided with the database (databaseAt, DatabaseLive):
 * what `/metrics` reports, without handing pg itself to the apps.
 */
export class DatabasePool extends Context.Tag("@points/infrastructure/DatabasePool")<
  DatabasePool,
  { readonly usage: Effect.Effect<PoolUsage> }
>() {}

/** The view of a pg pool that opens at most `max` connections, read when asked. */
export const poolUsageOf = (pool: pg.Pool, max: number): Context.Tag.Service<DatabasePool> => ({
  usage: Effect.sync(() => ({
    inUse: pool.totalCount - pool.idleCount,
    idle: pool.idleCount,
    max,
    waiting: pool.waitingCount,
  })),
})
