import type { WebhookDeliveryResource } from "@points/domain"
import { equals, type PageRequest, selectPage } from "../projections/keyset-page.js"
import { isoFromDatabase } from "../projections/row-batches.js"

interface DeliveryRow {
  readonly id: string
  readonly event_id: string
  readonly attempt: number
  readonly status: WebhookDeliveryResource["status"]
  readonly response_status: number | null
  readonly duration_ms: number | null
  readonly error: string | null
  readonly attempted_at: Date | null
  readonly next_attempt_at: Date | null
}

const toResource = (row: DeliveryRow): WebhookDeliveryResource => ({
  id: row.id,
  event_id: row.event_id,
  attempt: row.attempt,
  status: row.status,
  response_status: row.response_status,
  duration_ms: row.duration_ms,
  error: row.error,
  attempted_at: row.attempted_at === null ? null : isoFromDatabase(row.attempted_at),
  next_attempt_at: row.next_attempt_at === null ? null : isoFromDatabase(row.next_attempt_at),
})

/** A page of an endpoint's delivery attempts, newest first (the caller checks the endpoint is the partner's). */
export const selectDeliveriesPage = (partnerId: string, endpointId: string, request: PageRequest) =>
  selectPage({
    list: "webhook_deliveries",
    table: "webhook_deliveries",
    columns:
      "id, event_id, attempt, status, response_status, duration_ms, error, attempted_at, next_attempt_at",
    key: "id",
    scope: [equals("partner_id", partnerId), equals("endpoint_id", endpointId)],
    filters: [],
    request,
    keyOf: (row: DeliveryRow) => row.id,
    toResource,
    descending: true,
  })
