import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { hashClientSecret, newClientSecret, verifyClientSecret } from "../../src/index.js"

describe("Client secrets", () => {
  it.effect("are stored as Argon2id hashes with OWASP's minimum parameters and a fresh salt each", () =>
    Effect.gen(function* () {
      const secret = newClientSecret()
      const first = yield* hashClientSecret(secret)
      const second = yield* hashClientSecret(secret)
      expect(first).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
      expect(second).not.toBe(first)
      expect(yield* verifyClientSecret(secret, first)).toBe(true)
      expect(yield* verifyClientSecret(secret, second)).toBe(true)
      expect(yield* verifyClientSecret(`${secret}x`, first)).toBe(false)
      expect(yield* verifyClientSecret("", first)).toBe(false)
    }),
  )

  it.effect("are checked off the event loop: a timer set when a check starts fires before it ends", () =>
    Effect.gen(function* () {
      const hash = yield* hashClientSecret(newClientSecret())
      // A check done on the calling thread (hash-wasm's WebAssembly, as before) ends before any timer can fire:
      // the event loop, and every request on it, waits for those ~50 ms.
      let timerFired = false
      const timer = setTimeout(() => {
        timerFired = true
      }, 0)
      const firedBeforeTheEnd = yield* Effect.map(verifyClientSecret("pos_cs_wrong", hash), () => timerFired)
      clearTimeout(timer)
      expect(firedBeforeTheEnd).toBe(true)
    }),
  )
})
