import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * The read models the API serves, projected inline from the event log (src/projections). Every table is
 * derived data: `rebuildReadModels` can truncate and rewrite all of them from the log. Every row carries its
 * partner, and every query filters by it. Lists page by id (UUID v7, time-ordered), hence the
 * (partner_id, ..., id) indexes.
 */
export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE partners (
      id          uuid PRIMARY KEY,
      name        text NOT NULL,
      created_at  timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE users (
      id                 uuid PRIMARY KEY,
      partner_id         uuid NOT NULL,
      partner_user_id    text NOT NULL,
      email              text NOT NULL,
      name               text,
      status             text NOT NULL CHECK (status IN ('processing', 'active', 'closed')),
      points_account_id  uuid,
      created_at         timestamptz NOT NULL,
      updated_at         timestamptz NOT NULL,
      version            integer NOT NULL CHECK (version > 0)
    )`
  yield* sql`CREATE INDEX users_by_partner ON users (partner_id, id)`
  yield* sql`CREATE INDEX users_by_partner_user_id ON users (partner_id, partner_user_id, id)`
  yield* sql`
    CREATE TABLE points_accounts (
      id          uuid PRIMARY KEY,
      user_id     uuid NOT NULL,
      partner_id  uuid NOT NULL,
      balance     bigint NOT NULL CHECK (balance >= 0),
      status      text NOT NULL CHECK (status IN ('open', 'closed')),
      created_at  timestamptz NOT NULL,
      updated_at  timestamptz NOT NULL,
      version     integer NOT NULL CHECK (version > 0),
      -- One account per user, as the ledger stream (keyed by the user) guarantees.
      CONSTRAINT points_accounts_one_per_user UNIQUE (partner_id, user_id)
    )`
  yield* sql`
    CREATE TABLE points_transactions (
      id               uuid PRIMARY KEY,
      partner_id       uuid NOT NULL,
      account_id       uuid NOT NULL,
      user_id          uuid NOT NULL,
      type             text NOT NULL CHECK (type IN ('add', 'subtract', 'order_debit', 'order_refund')),
      amount           bigint NOT NULL CHECK (amount > 0),
      balance_after    bigint NOT NULL CHECK (balance_after >= 0),
      reference_id     text NOT NULL,
      description      text,
      order_id         uuid,
      created_at       timestamptz NOT NULL,
      global_position  bigint NOT NULL
    )`
  // The second line of defence behind the Reference reservation stream: a partner's reference id names one
  // add or subtract. An order's debit and refund carry the order's reference id, so they are left out.
  yield* sql`
    CREATE UNIQUE INDEX points_transactions_unique_reference ON points_transactions (partner_id, reference_id)
    WHERE type IN ('add', 'subtract')`
  yield* sql`CREATE INDEX points_transactions_by_partner ON points_transactions (partner_id, id)`
  yield* sql`CREATE INDEX points_transactions_by_user ON points_transactions (partner_id, user_id, id)`
  yield* sql`CREATE INDEX points_transactions_by_reference ON points_transactions (partner_id, reference_id, id)`
  yield* sql`
    CREATE TABLE orders (
      id                    uuid PRIMARY KEY,
      partner_id            uuid NOT NULL,
      user_id               uuid NOT NULL,
      reference_id          text NOT NULL,
      status                text NOT NULL
                            CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'cancelled')),
      items                 jsonb NOT NULL CHECK (jsonb_typeof(items) = 'array'),
      total_points          bigint NOT NULL CHECK (total_points > 0),
      debit_transaction_id  uuid NOT NULL,
      failure_reason        text,
      status_history        jsonb NOT NULL CHECK (jsonb_typeof(status_history) = 'array'),
      created_at            timestamptz NOT NULL,
      updated_at            timestamptz NOT NULL,
      version               integer NOT NULL CHECK (version > 0)
    )`
  // The second line of defence behind the Reference reservation stream: one order per partner reference id.
  yield* sql`CREATE UNIQUE INDEX orders_unique_reference ON orders (partner_id, reference_id)`
  yield* sql`CREATE INDEX orders_by_partner ON orders (partner_id, id)`
  yield* sql`CREATE INDEX orders_by_user ON orders (partner_id, user_id, id)`
  yield* sql`CREATE INDEX orders_by_status ON orders (partner_id, status, id)`
  // No secrets here: the signing secrets live in their own store, referenced from the event log by id.
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id               uuid PRIMARY KEY,
      partner_id       uuid NOT NULL,
      url              text NOT NULL,
      event_types      jsonb NOT NULL CHECK (jsonb_typeof(event_types) = 'array'),
      description      text,
      enabled          boolean NOT NULL,
      disabled_reason  text CHECK (disabled_reason IN ('gone', 'failing')),
      created_at       timestamptz NOT NULL,
      updated_at       timestamptz NOT NULL,
      version          integer NOT NULL CHECK (version > 0)
    )`
  yield* sql`CREATE INDEX webhook_endpoints_by_partner ON webhook_endpoints (partner_id, id)`
  // Secrets only as slow hashes; the previous one is accepted until previous_valid_until.
  yield* sql`
    CREATE TABLE client_credentials (
      client_id             uuid PRIMARY KEY,
      partner_id            uuid NOT NULL,
      name                  text,
      secret_hash           text NOT NULL,
      previous_secret_hash  text,
      previous_valid_until  timestamptz,
      status                text NOT NULL CHECK (status IN ('active', 'revoked')),
      created_at            timestamptz NOT NULL,
      updated_at            timestamptz NOT NULL,
      version               integer NOT NULL CHECK (version > 0),
      CHECK ((previous_secret_hash IS NULL) = (previous_valid_until IS NULL))
    )`
  yield* sql`CREATE INDEX client_credentials_by_partner ON client_credentials (partner_id, client_id)`
})
