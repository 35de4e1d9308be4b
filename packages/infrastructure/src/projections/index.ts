export * from "./credentials.js"
export * from "./inline-projection-live.js"
export {
  DEFAULT_PAGE_LIMIT,
  decodeCursor,
  MAX_PAGE_LIMIT,
  type PageRequest,
  pageLimit,
} from "./keyset-page.js"
export * from "./orders.js"
export * from "./partners.js"
export * from "./points-accounts.js"
export * from "./public-events.js"
export * from "./read-model-tables.js"
export * from "./rebuild-read-models.js"
export * from "./resources.js"
export * from "./transactions.js"
export * from "./users.js"
export * from "./verify-read-models.js"
export * from "./webhook-endpoints.js"
