// Resource bodies as the server answers them (the client decodes them with the contract's schemas).

const at = "2025-01-31T12:00:00.000Z"

/** A user. */
export const userBody = (id: string, status: "processing" | "active" = "processing") => ({
  id,
  partner_user_id: "p-1",
  email: "ada@example.com",
  name: "Ada",
  status,
  points_account_id: null,
  created_at: at,
  updated_at: at,
  version: 1,
})

/** A transaction. */
export const transactionBody = (id: string, referenceId: string, amount = 100) => ({
  id,
  account_id: "0198d7e2-0000-7000-8000-00000000a000",
  user_id: "0198d7e2-0000-7000-8000-00000000u000",
  type: "add",
  amount,
  balance_after: amount,
  reference_id: referenceId,
  description: null,
  order_id: null,
  created_at: at,
  version: 1,
})

/** An order. */
export const orderBody = (id: string, referenceId: string) => ({
  id,
  user_id: "0198d7e2-0000-7000-8000-00000000u000",
  reference_id: referenceId,
  status: "pending",
  items: [{ sku: "MUG", name: null, quantity: 1, points: 50 }],
  total_points: 50,
  debit_transaction_id: "0198d7e2-0000-7000-8000-00000000t000",
  failure_reason: null,
  status_history: [{ status: "pending", at }],
  created_at: at,
  updated_at: at,
  version: 1,
})

/** A webhook endpoint, with its secret when `secret` is given (create and rotate-secret answer it). */
export const endpointBody = (id: string, secret?: string) => ({
  id,
  url: "https://hooks.example.com/in",
  event_types: ["points.added"],
  description: null,
  enabled: true,
  disabled_reason: null,
  created_at: at,
  updated_at: at,
  version: 1,
  ...(secret === undefined ? {} : { secret }),
})

/** One delivery attempt. */
export const deliveryBody = (id: string, eventId: string) => ({
  id,
  event_id: eventId,
  attempt: 1,
  status: "succeeded",
  response_status: 204,
  duration_ms: 12,
  error: null,
  attempted_at: at,
  next_attempt_at: null,
})

/** A public event announcing a user's creation. */
export const userCreatedEvent = (id: string, userId: string) => ({
  id,
  type: "user.created",
  timestamp: at,
  data: userBody(userId),
})
