import { expect, layer } from "@effect/vitest"
import { IdempotencyKeyReused } from "@points/domain"
import { Effect } from "effect"
import { ClaimOutcome, claimKey, releaseKey } from "../../src/index.js"
import {
  age,
  claimOf,
  executeRequest,
  fingerprint,
  idempotencyTestDatabase,
  newKey,
  newPartner,
  response,
  rowOf,
} from "./key-fixtures.js"

const execute = (claim: ReturnType<typeof claimOf>) =>
  Effect.flatMap(claimKey(claim), (outcome) =>
    outcome._tag === "Execute" ? Effect.succeed(outcome) : Effect.dieMessage("expected Execute"),
  )

layer(idempotencyTestDatabase())("releaseKey", (it) => {
  it.effect("frees a claimed key: the same request, or another, executes on it as on a new key", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const { claimToken } = yield* execute(claimOf(partnerId, key))
      expect(yield* releaseKey({ partnerId, key, claimToken })).toBe(true)
      expect(yield* rowOf({ partnerId, key })).toMatchObject({ state: "Released", lease_expires_at: null })
      // Free again (DESIGN.md section 4), as the API's rolled-back claim leaves it: another request runs.
      const otherRequest = fingerprint({ body: "{}" })
      const other = yield* execute(claimOf(partnerId, key, { fingerprint: otherRequest }))
      expect(other.claimToken).not.toBe(claimToken)
      expect(yield* rowOf({ partnerId, key })).toMatchObject({
        state: "Claimed",
        claim_token: other.claimToken,
      })
      // Released again, the first request runs again too.
      expect(yield* releaseKey({ partnerId, key, claimToken: other.claimToken })).toBe(true)
      const again = yield* execute(claimOf(partnerId, key))
      expect(again.claimToken).not.toBe(other.claimToken)
      // Then the key is that request's: another one is refused.
      const refused = yield* Effect.flip(claimKey(claimOf(partnerId, key, { fingerprint: otherRequest })))
      expect(refused).toEqual(new IdempotencyKeyReused({ differs: ["body"] }))
    }),
  )

  it.effect("releases nothing for a claim that was taken over", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const first = yield* execute(claimOf(partnerId, key))
      yield* age({ partnerId, key }, 30)
      const second = yield* execute(claimOf(partnerId, key))
      expect(second.takeover).toBe(true)
      expect(yield* releaseKey({ partnerId, key, claimToken: first.claimToken })).toBe(false)
      expect(yield* rowOf({ partnerId, key })).toMatchObject({
        state: "Claimed",
        claim_token: second.claimToken,
      })
    }),
  )

  it.effect("releases nothing once the response is recorded, nor for an unknown key", () =>
    Effect.gen(function* () {
      const partnerId = newPartner()
      const key = newKey()
      const { claimToken } = yield* execute(claimOf(partnerId, key))
      yield* executeRequest({ partnerId, key, claimToken }, "done")
      expect(yield* releaseKey({ partnerId, key, claimToken })).toBe(false)
      expect(yield* claimKey(claimOf(partnerId, key))).toEqual(
        ClaimOutcome.Replay({ response: response(201, { note: "done" }) }),
      )
      expect(yield* releaseKey({ partnerId, key: newKey(), claimToken })).toBe(false)
    }),
  )
})
