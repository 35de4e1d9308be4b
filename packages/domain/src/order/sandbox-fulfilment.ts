import type { OrderItem } from "./items.js"

/** The sku prefix (case-sensitive) that the sandbox cannot deliver, so partners can test the failed path. */
export const SANDBOX_FAILING_SKU_PREFIX = "FAIL"

/**
 * Why the sandbox fails to deliver an order, naming its first item whose sku starts with FAIL; null when
 * every item can be delivered. The reason becomes the order's published `failure_reason`.
 */
export const sandboxFailureOf = (items: ReadonlyArray<Pick<OrderItem, "sku">>): string | null => {
  const failing = items.find((item) => item.sku.startsWith(SANDBOX_FAILING_SKU_PREFIX))
  return failing === undefined
    ? null
    : `item ${failing.sku} cannot be fulfilled (sandbox: its sku starts with ${SANDBOX_FAILING_SKU_PREFIX})`
}
