import { SqlClient } from "@effect/sql"
import { isUuid } from "@points/domain"
import { Effect, Option } from "effect"

/**
 * One partner's row of a read-model table by its id, or none: another partner's row and a malformed id are
 * both none (a malformed id never reaches the database, so it is a 404, not a database error).
 */
export const selectById = <Row extends object>(options: {
  readonly table: string
  readonly columns: string
  readonly partnerId: string
  readonly id: string
}) =>
  Effect.gen(function* () {
    if (!isUuid(options.id)) return Option.none<Row>()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<Row>(
      `SELECT ${options.columns} FROM ${options.table} WHERE partner_id = $1 AND id = $2`,
      [options.partnerId, options.id],
    )
    return Option.fromNullable(rows[0])
  })
