import { SqlClient } from "@effect/sql"
import { ResourceNotFound, type User } from "@points/domain"
import { Effect, Option } from "effect"
import { equals, type PageRequest, textEquals } from "./keyset-page.js"
import { selectPageOfCommits } from "./late-commit-page.js"
import type { UserResource } from "./resources.js"
import { isoFromDatabase, isoOf } from "./row-batches.js"
import { selectById } from "./select-by-id.js"

/** A `users` row as the projection writes it (timestamps as ISO strings). */
export interface UserRow {
  readonly id: string
  readonly partner_id: string
  readonly partner_user_id: string
  readonly email: string
  readonly name: string | null
  readonly status: User.UserStatus
  /** Set from the user's ledger; null here means "keep what the row has", as the user stream does not know. */
  readonly points_account_id: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly version: number
}

/** The row of a user's state; none before registration. */
export const userRowOf = (partnerId: string, state: User.UserState): UserRow | null =>
  state._tag === "Registered"
    ? {
        id: state.userId,
        partner_id: partnerId,
        partner_user_id: state.partnerUserId,
        email: state.email,
        name: state.name,
        status: state.status,
        points_account_id: state.pointsAccountId,
        created_at: isoOf(state.createdAt),
        updated_at: isoOf(state.updatedAt),
        version: state.version,
      }
    : null

// A user's stream names its points account (PointsAccountLinked, appended with the account's opening). A user
// whose account was opened before that event existed has none: its row keeps the link it has, or finds the
// account in points_accounts (a rebuild links it from the ledger). An existing link is never cleared.
const upsertStatement = `
  INSERT INTO users (id, partner_id, partner_user_id, email, name, status, points_account_id, created_at,
                     updated_at, version)
  SELECT u.id, u.partner_id, u.partner_user_id, u.email, u.name, u.status,
         COALESCE(u.points_account_id,
                  (SELECT a.id FROM points_accounts a WHERE a.partner_id = u.partner_id AND a.user_id = u.id)),
         u.created_at, u.updated_at, u.version
  FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::uuid[],
              $8::timestamptz[], $9::timestamptz[], $10::int[])
    AS u(id, partner_id, partner_user_id, email, name, status, points_account_id, created_at, updated_at, version)
  ON CONFLICT (id) DO UPDATE SET
    partner_user_id = EXCLUDED.partner_user_id, email = EXCLUDED.email, name = EXCLUDED.name,
    status = EXCLUDED.status, points_account_id = COALESCE(EXCLUDED.points_account_id, users.points_account_id),
    updated_at = EXCLUDED.updated_at, version = EXCLUDED.version
  WHERE users.partner_id = EXCLUDED.partner_id`

/** Inserts or replaces user rows by id, in one statement. */
export const upsertUsers = (rows: ReadonlyArray<UserRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(upsertStatement, [
      rows.map((row) => row.id),
      rows.map((row) => row.partner_id),
      rows.map((row) => row.partner_user_id),
      rows.map((row) => row.email),
      rows.map((row) => row.name),
      rows.map((row) => row.status),
      rows.map((row) => row.points_account_id),
      rows.map((row) => row.created_at),
      rows.map((row) => row.updated_at),
      rows.map((row) => row.version),
    ]),
  )

interface UserDatabaseRow {
  readonly id: string
  readonly partner_user_id: string
  readonly email: string
  readonly name: string | null
  readonly status: User.UserStatus
  readonly points_account_id: string | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly version: number
}

const columns = "id, partner_user_id, email, name, status, points_account_id, created_at, updated_at, version"

const toResource = (row: UserDatabaseRow): UserResource => ({
  id: row.id,
  partner_user_id: row.partner_user_id,
  email: row.email,
  name: row.name,
  status: row.status,
  points_account_id: row.points_account_id,
  created_at: isoFromDatabase(row.created_at),
  updated_at: isoFromDatabase(row.updated_at),
  version: row.version,
})

/** A partner's user, or none (also when the id is another partner's, or no id at all). */
export const findUser = (partnerId: string, userId: string) =>
  Effect.map(
    selectById<UserDatabaseRow>({ table: "users", columns, partnerId, id: userId }),
    Option.map(toResource),
  )

/** A partner's user; LE0002 when the partner has no such user. */
export const getUser = (partnerId: string, userId: string) =>
  Effect.flatMap(findUser(partnerId, userId), (user) =>
    Option.match(user, {
      onNone: () => Effect.fail(new ResourceNotFound({ resource: "user", id: userId })),
      onSome: Effect.succeed,
    }),
  )

/** What `GET /api/users` filters and pages by. */
export interface FindUsersRequest extends PageRequest {
  readonly partner_user_id?: string | undefined
}

/** A page of a partner's users, oldest first, optionally only those with a `partner_user_id`. */
export const findUsers = (partnerId: string, request: FindUsersRequest) =>
  selectPageOfCommits({
    list: "users",
    table: "users",
    columns,
    key: "id",
    scope: [equals("partner_id", partnerId)],
    filters: [
      ...(request.partner_user_id === undefined
        ? []
        : [textEquals("partner_user_id", request.partner_user_id)]),
    ],
    request,
    keyOf: (row: UserDatabaseRow & { readonly seen: string }) => row.id,
    toResource,
  })
