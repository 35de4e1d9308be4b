import { SqlClient } from "@effect/sql"
import { type Order, ResourceNotFound } from "@points/domain"
import { Effect, Option } from "effect"
import { duplicateReferenceAs } from "./duplicate-reference.js"
import { equals, type PageRequest, textEquals, uuidEquals } from "./keyset-page.js"
import { selectPageOfCommits } from "./late-commit-page.js"
import type { OrderItemResource, OrderResource, StatusChangeResource } from "./resources.js"
import { isoFromDatabase, isoOf, numberFromDatabase } from "./row-batches.js"
import { selectById } from "./select-by-id.js"

/** An `orders` row as the projection writes it; `items` and `status_history` as published, in jsonb. */
export interface OrderRow {
  readonly id: string
  readonly partner_id: string
  readonly user_id: string
  readonly reference_id: string
  readonly status: Order.OrderStatus
  readonly items: ReadonlyArray<OrderItemResource>
  readonly total_points: number
  readonly debit_transaction_id: string
  readonly failure_reason: string | null
  readonly status_history: ReadonlyArray<StatusChangeResource>
  readonly created_at: string
  readonly updated_at: string
  readonly version: number
}

/** The row of an order's state; none before it is placed. */
export const orderRowOf = (partnerId: string, state: Order.OrderState): OrderRow | null =>
  state._tag === "Placed"
    ? {
        id: state.orderId,
        partner_id: partnerId,
        user_id: state.userId,
        reference_id: state.referenceId,
        status: state.status,
        items: state.items.map((item) => ({
          sku: item.sku,
          name: item.name,
          quantity: item.quantity,
          points: item.points,
        })),
        total_points: state.totalPoints,
        debit_transaction_id: state.debitTransactionId,
        failure_reason: state.failureReason,
        status_history: state.statusHistory.map((change) => ({
          status: change.status,
          at: isoOf(change.at),
        })),
        created_at: isoOf(state.createdAt),
        updated_at: isoOf(state.updatedAt),
        version: state.version,
      }
    : null

const upsertStatement = `
  INSERT INTO orders (id, partner_id, user_id, reference_id, status, items, total_points, debit_transaction_id,
                      failure_reason, status_history, created_at, updated_at, version)
  SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[],
                       $8::uuid[], $9::text[], $10::jsonb[], $11::timestamptz[], $12::timestamptz[], $13::int[])
  ON CONFLICT (id) DO UPDATE SET
    status = EXCLUDED.status, failure_reason = EXCLUDED.failure_reason,
    status_history = EXCLUDED.status_history, updated_at = EXCLUDED.updated_at, version = EXCLUDED.version
  WHERE orders.partner_id = EXCLUDED.partner_id`

/** Inserts or replaces order rows by id in one statement; LE0006 when a new order reuses a reference id. */
export const upsertOrders = (rows: ReadonlyArray<OrderRow>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.unsafe(upsertStatement, [
      rows.map((row) => row.id),
      rows.map((row) => row.partner_id),
      rows.map((row) => row.user_id),
      rows.map((row) => row.reference_id),
      rows.map((row) => row.status),
      rows.map((row) => JSON.stringify(row.items)),
      rows.map((row) => row.total_points),
      rows.map((row) => row.debit_transaction_id),
      rows.map((row) => row.failure_reason),
      rows.map((row) => JSON.stringify(row.status_history)),
      rows.map((row) => row.created_at),
      rows.map((row) => row.updated_at),
      rows.map((row) => row.version),
    ]),
  ).pipe(duplicateReferenceAs("order", rows[0]?.reference_id ?? ""))

interface OrderDatabaseRow {
  readonly id: string
  readonly user_id: string
  readonly reference_id: string
  readonly status: Order.OrderStatus
  readonly items: ReadonlyArray<OrderItemResource>
  readonly total_points: string
  readonly debit_transaction_id: string
  readonly failure_reason: string | null
  readonly status_history: ReadonlyArray<StatusChangeResource>
  readonly created_at: Date
  readonly updated_at: Date
  readonly version: number
}

const columns = `id, user_id, reference_id, status, items, total_points, debit_transaction_id, failure_reason,
  status_history, created_at, updated_at, version`

const toResource = (row: OrderDatabaseRow): OrderResource => ({
  id: row.id,
  user_id: row.user_id,
  reference_id: row.reference_id,
  status: row.status,
  items: row.items,
  total_points: numberFromDatabase(row.total_points),
  debit_transaction_id: row.debit_transaction_id,
  failure_reason: row.failure_reason,
  status_history: row.status_history,
  created_at: isoFromDatabase(row.created_at),
  updated_at: isoFromDatabase(row.updated_at),
  version: row.version,
})

/** A partner's order; LE0002 when the partner has none with this id. */
export const getOrder = (partnerId: string, orderId: string) =>
  Effect.flatMap(
    selectById<OrderDatabaseRow>({ table: "orders", columns, partnerId, id: orderId }),
    Option.match({
      onNone: () => Effect.fail(new ResourceNotFound({ resource: "order", id: orderId })),
      onSome: (row) => Effect.succeed(toResource(row)),
    }),
  )

/** What `GET /api/orders` filters and pages by (the HTTP layer checks `status` is one of the statuses). */
export interface FindOrdersRequest extends PageRequest {
  readonly reference_id?: string | undefined
  readonly user_id?: string | undefined
  readonly status?: Order.OrderStatus | undefined
}

/** A page of a partner's orders, oldest first, optionally of one reference id, one user and/or one status. */
export const findOrders = (partnerId: string, request: FindOrdersRequest) =>
  selectPageOfCommits({
    list: "orders",
    table: "orders",
    columns,
    key: "id",
    scope: [equals("partner_id", partnerId)],
    filters: [
      ...(request.reference_id === undefined ? [] : [textEquals("reference_id", request.reference_id)]),
      ...(request.user_id === undefined ? [] : [uuidEquals("user_id", request.user_id)]),
      ...(request.status === undefined ? [] : [equals("status", request.status)]),
    ],
    request,
    keyOf: (row: OrderDatabaseRow & { readonly seen: string }) => row.id,
    toResource,
  })
