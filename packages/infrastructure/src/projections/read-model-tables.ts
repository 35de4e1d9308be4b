/** Every read-model table, each with the column its rows are ordered by; all of them derived from the log. */
export const readModelTables = {
  partners: "id",
  client_credentials: "client_id",
  webhook_endpoints: "id",
  users: "id",
  points_accounts: "id",
  points_transactions: "id",
  orders: "id",
} as const

/** A read-model table's name. */
export type ReadModelTable = keyof typeof readModelTables
