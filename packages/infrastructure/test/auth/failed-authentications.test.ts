import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import {
  FAILED_AUTHENTICATIONS_WINDOW_SECONDS,
  FailedAuthentications,
  NETWORKS_PER_SITE,
} from "../../src/index.js"

// The limiter's windows run on Date and timers: faked, so that a window ends when the test says.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

const failTimes = (address: string, times: number) =>
  Effect.flatMap(FailedAuthentications, (failures) => Effect.repeatN(failures.charge(address), times - 1))

describe("FailedAuthentications", () => {
  it.effect("refuses a network once it failed perSecond x the window's seconds, until the window ends", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      const allowed = 2 * FAILED_AUTHENTICATIONS_WINDOW_SECONDS
      yield* failTimes("203.0.113.7", allowed - 1)
      expect(yield* failures.refusedFor("203.0.113.7")).toBe(0)
      yield* failures.charge("203.0.113.7")
      const wait = yield* failures.refusedFor("203.0.113.7")
      expect(wait).toBeGreaterThanOrEqual(1)
      expect(wait).toBeLessThanOrEqual(FAILED_AUTHENTICATIONS_WINDOW_SECONDS)
      // Another network, even the next address, is not refused.
      expect(yield* failures.refusedFor("203.0.113.8")).toBe(0)
      vi.advanceTimersByTime(FAILED_AUTHENTICATIONS_WINDOW_SECONDS * 1000 - 1500)
      expect(yield* failures.refusedFor("203.0.113.7")).toBe(2)
      vi.advanceTimersByTime(1500)
      expect(yield* failures.refusedFor("203.0.113.7")).toBe(0)
    }).pipe(Effect.provide(FailedAuthentications.layer(2))),
  )

  it.effect("counts and decides in one step, and gives a failure back only within its window", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      const allowed = FAILED_AUTHENTICATIONS_WINDOW_SECONDS
      // All at once, as requests pipelined on one connection come: exactly the allowance passes.
      const waits = yield* Effect.all(
        Array.from({ length: allowed + 5 }, () => failures.charge("203.0.113.20")),
        { concurrency: "unbounded" },
      )
      expect(waits.filter((wait) => wait === 0)).toHaveLength(allowed)
      expect(waits.filter((wait) => wait > 0)).toHaveLength(5)
      // Once the window has ended, a failure given back does not make the next window's allowance larger.
      vi.advanceTimersByTime(FAILED_AUTHENTICATIONS_WINDOW_SECONDS * 1000 + 1)
      yield* failures.forgive("203.0.113.20")
      for (let n = 0; n < allowed; n++) expect(yield* failures.charge("203.0.113.20")).toBe(0)
      expect(yield* failures.charge("203.0.113.20")).toBeGreaterThan(0)
      // Within a window, one given back is one more allowed.
      yield* failTimes("203.0.113.21", allowed)
      expect(yield* failures.refusedFor("203.0.113.21")).toBeGreaterThan(0)
      yield* failures.forgive("203.0.113.21")
      expect(yield* failures.charge("203.0.113.21")).toBe(0)
    }).pipe(Effect.provide(FailedAuthentications.layer(1))),
  )

  it.effect("counts an IPv6 /64 as one network, and an IPv4 address mapped into IPv6 as itself", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      for (let n = 0; n < FAILED_AUTHENTICATIONS_WINDOW_SECONDS; n++)
        yield* failures.charge(`2001:db8:1:2::${n}`)
      expect(yield* failures.refusedFor("2001:db8:1:2:ffff::1")).toBeGreaterThan(0)
      expect(yield* failures.refusedFor("2001:db8:1:3::1")).toBe(0)
      for (let n = 0; n < FAILED_AUTHENTICATIONS_WINDOW_SECONDS; n++) yield* failures.charge("198.51.100.1")
      expect(yield* failures.refusedFor("::ffff:198.51.100.1")).toBeGreaterThan(0)
    }).pipe(Effect.provide(FailedAuthentications.layer(1))),
  )

  it.effect("counts the networks of one IPv6 /48 together at twice one network's allowance", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      const allowed = FAILED_AUTHENTICATIONS_WINDOW_SECONDS
      expect(NETWORKS_PER_SITE).toBe(2)
      // One network spends its allowance, and goes on failing: what its network refuses costs its site nothing.
      yield* failTimes("2001:db8:5:1::1", allowed)
      const refused = yield* Effect.forEach(Array.from({ length: 5 }), () =>
        failures.charge("2001:db8:5:1::1"),
      )
      expect(refused.every((wait) => wait > 0)).toBe(true)
      expect(yield* failures.refusedFor("2001:db8:5:2::1")).toBe(0)
      // A second network of the site spends its own: the site has had two networks' worth.
      yield* failTimes("2001:db8:5:2::1", allowed)
      // So a third network of it, which has failed nothing, is refused.
      expect(yield* failures.refusedFor("2001:db8:5:3::1")).toBeGreaterThan(0)
      expect(yield* failures.charge("2001:db8:5:3::1")).toBeGreaterThan(0)
      // A network of another /48, and an IPv4 address, are not.
      expect(yield* failures.refusedFor("2001:db8:6:1::1")).toBe(0)
      expect(yield* failures.charge("2001:db8:6:1::1")).toBe(0)
      expect(yield* failures.charge("198.51.100.5")).toBe(0)
      // A failure given back to the site (its token was valid after all) lets one more of the site through.
      yield* failures.forgive("2001:db8:5:2::1")
      yield* failures.forgive("2001:db8:5:2::1")
      expect(yield* failures.refusedFor("2001:db8:5:3::1")).toBe(0)
      expect(yield* failures.charge("2001:db8:5:4::1")).toBe(0)
      // The site's window ends with its networks'.
      vi.advanceTimersByTime(FAILED_AUTHENTICATIONS_WINDOW_SECONDS * 1000 + 1)
      expect(yield* failures.refusedFor("2001:db8:5:3::1")).toBe(0)
      expect(yield* failures.charge("2001:db8:5:1::1")).toBe(0)
    }).pipe(Effect.provide(FailedAuthentications.layer(1))),
  )

  it.effect("refuses nothing when its limit is 0 (off)", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      for (let n = 0; n < 1000; n++) yield* failures.charge("203.0.113.9")
      expect(yield* failures.refusedFor("203.0.113.9")).toBe(0)
    }).pipe(Effect.provide(FailedAuthentications.layer(0))),
  )
})
