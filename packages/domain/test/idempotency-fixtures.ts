import { DateTime } from "effect"
import { IdempotencyKey } from "../src/index.js"
import { partnerId } from "./fixtures.js"

// A key of one partner, two requests that could use it, and the settings of the platform's defaults.
export const key = IdempotencyKey.IdempotencyKeyValue.make("cart-2024-0042")
export const LEASE_SECONDS = 30
export const LIFETIME_SECONDS = 86_400

export const createOrder = IdempotencyKey.RequestFingerprint.make({
  method: "POST",
  path: "/api/orders",
  bodySha256: "a".repeat(64),
})
export const createOtherOrder = IdempotencyKey.RequestFingerprint.make({
  ...createOrder,
  bodySha256: "b".repeat(64),
})

export const created = IdempotencyKey.RecordedResponse.make({
  status: 201,
  headers: {
    "Content-Type": "application/json",
    Location: "/api/orders/01936b2e-0000-7000-8000-0000000000d1",
  },
  body: '{"id":"01936b2e-0000-7000-8000-0000000000d1","status":"pending"}',
})

/** The instant `seconds` after the TestClock's start. */
export const second = (seconds: number) => DateTime.unsafeMake(seconds * 1000)

export const claimKey = (fingerprint = createOrder) =>
  IdempotencyKey.ClaimKey.make({
    partnerId,
    key,
    fingerprint,
    leaseSeconds: LEASE_SECONDS,
    lifetimeSeconds: LIFETIME_SECONDS,
  })

/** The claim made at `at` seconds, in a lifetime that started at `first` seconds. */
export const keyClaimed = (options: {
  readonly at: number
  readonly first?: number
  readonly takeover?: boolean
  readonly fingerprint?: IdempotencyKey.RequestFingerprint
}) => {
  const first = options.first ?? options.at
  return IdempotencyKey.KeyClaimed.make({
    partnerId,
    key,
    fingerprint: options.fingerprint ?? createOrder,
    firstReceivedAt: second(first),
    expiresAt: second(first + LIFETIME_SECONDS),
    leaseExpiresAt: second(options.at + LEASE_SECONDS),
    takeover: options.takeover ?? false,
    at: second(options.at),
  })
}

export const responseRecorded = (at: number, response = created) =>
  IdempotencyKey.ResponseRecorded.make({ partnerId, key, response, at: second(at) })

export const keyReleased = (at: number, status: number | null) =>
  IdempotencyKey.KeyReleased.make({ partnerId, key, status, at: second(at) })

export const keyExpired = (at: number) => IdempotencyKey.KeyExpired.make({ partnerId, key, at: second(at) })
