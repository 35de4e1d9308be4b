import { AccountId, OrderId, ReferenceId, Sku, TransactionId, UserId } from "../src/index.js"

// Fixed ids for the points account, order and reference id specifications (see fixtures.ts for the rest).
export const accountId = AccountId.make("01936b2e-0000-7000-8000-0000000000b1")
export const otherAccountId = AccountId.make("01936b2e-0000-7000-8000-0000000000b2")
export const otherUserId = UserId.make("01936b2e-0000-7000-8000-0000000000a2")

export const addTransactionId = TransactionId.make("01936b2e-0000-7000-8000-0000000000c1")
export const subtractTransactionId = TransactionId.make("01936b2e-0000-7000-8000-0000000000c2")
export const debitTransactionId = TransactionId.make("01936b2e-0000-7000-8000-0000000000c3")
export const refundTransactionId = TransactionId.make("01936b2e-0000-7000-8000-0000000000c4")
export const otherTransactionId = TransactionId.make("01936b2e-0000-7000-8000-0000000000c5")

export const orderId = OrderId.make("01936b2e-0000-7000-8000-0000000000d1")
export const otherOrderId = OrderId.make("01936b2e-0000-7000-8000-0000000000d2")

export const referenceId = ReferenceId.make("ref-1")
export const orderReferenceId = ReferenceId.make("order-ref-1")
export const sku = Sku.make("SKU-1")
export const failingSku = Sku.make("FAIL-1")
