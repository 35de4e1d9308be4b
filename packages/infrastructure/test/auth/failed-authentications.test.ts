import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import { failureWindows } from "../../src/auth/failed-authentications.js"
import {
  FAILED_AUTHENTICATIONS_WINDOW_SECONDS,
  FailedAuthentications,
  type FailureCharge,
  NETWORKS_PER_SITE,
} from "../../src/index.js"

const WINDOW_MS = FAILED_AUTHENTICATIONS_WINDOW_SECONDS * 1000

// The windows run on Date: faked, so that a window ends when the test says.
beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

const charges = (address: string, times: number) =>
  Effect.flatMap(FailedAuthentications, (failures) =>
    Effect.forEach(Array.from({ length: times }), () => failures.charge(address)),
  )

const charged = (charge: FailureCharge) => charge._tag === "Charged"

// The failures' charges, all of them counted (none refused).
const failTimes = (address: string, times: number) =>
  Effect.map(charges(address, times), (all) => {
    expect(all.map(charged)).toEqual(all.map(() => true))
    return all.flatMap((charge) => (charge._tag === "Charged" ? [charge] : []))
  })

const retryAfterOf = (charge: FailureCharge) => (charge._tag === "Refused" ? charge.retryAfterSeconds : 0)

describe("FailedAuthentications", () => {
  it.effect("refuses a network once it failed perSecond x the window's seconds, until the window ends", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      const allowed = 2 * FAILED_AUTHENTICATIONS_WINDOW_SECONDS
      yield* failTimes("203.0.113.7", allowed - 1)
      expect(yield* failures.refusedFor("203.0.113.7")).toBe(0)
      yield* failTimes("203.0.113.7", 1)
      const wait = yield* failures.refusedFor("203.0.113.7")
      expect(wait).toBe(FAILED_AUTHENTICATIONS_WINDOW_SECONDS)
      expect(retryAfterOf(yield* failures.charge("203.0.113.7"))).toBe(wait)
      // Another network, even the next address, is not refused.
      expect(yield* failures.refusedFor("203.0.113.8")).toBe(0)
      vi.advanceTimersByTime(WINDOW_MS - 1500)
      expect(yield* failures.refusedFor("203.0.113.7")).toBe(2)
      vi.advanceTimersByTime(1500)
      expect(yield* failures.refusedFor("203.0.113.7")).toBe(0)
      expect(charged(yield* failures.charge("203.0.113.7"))).toBe(true)
    }).pipe(Effect.provide(FailedAuthentications.layer(2))),
  )

  it.effect(
    "counts and decides in one step, and gives a failure back only to the window it was counted in",
    () =>
      Effect.gen(function* () {
        const failures = yield* FailedAuthentications
        const allowed = FAILED_AUTHENTICATIONS_WINDOW_SECONDS
        // All at once, as requests pipelined on one connection come: exactly the allowance passes.
        const all = yield* Effect.all(
          Array.from({ length: allowed + 5 }, () => failures.charge("203.0.113.20")),
          { concurrency: "unbounded" },
        )
        expect(all.filter(charged)).toHaveLength(allowed)
        expect(all.filter((charge) => !charged(charge))).toHaveLength(5)
        // Once the window has ended, a failure given back does not make the next window's allowance larger.
        vi.advanceTimersByTime(WINDOW_MS)
        const next = yield* failTimes("203.0.113.20", allowed)
        for (const charge of all) if (charge._tag === "Charged") yield* charge.forgive
        expect(yield* failures.refusedFor("203.0.113.20")).toBeGreaterThan(0)
        // Within its window, one given back is one more allowed; given back twice, still one.
        yield* next[0]?.forgive ?? Effect.die("no charge")
        yield* next[0]?.forgive ?? Effect.die("no charge")
        expect(yield* failures.refusedFor("203.0.113.20")).toBe(0)
        expect(charged(yield* failures.charge("203.0.113.20"))).toBe(true)
        expect(charged(yield* failures.charge("203.0.113.20"))).toBe(false)
      }).pipe(Effect.provide(FailedAuthentications.layer(1))),
  )

  it.effect("counts an IPv6 /64 as one network, and an IPv4 address mapped into IPv6 as itself", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      for (let n = 0; n < FAILED_AUTHENTICATIONS_WINDOW_SECONDS; n++)
        yield* failTimes(`2001:db8:1:2::${n}`, 1)
      expect(yield* failures.refusedFor("2001:db8:1:2:ffff::1")).toBeGreaterThan(0)
      expect(yield* failures.refusedFor("2001:db8:1:3::1")).toBe(0)
      yield* failTimes("198.51.100.1", FAILED_AUTHENTICATIONS_WINDOW_SECONDS)
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
      const refused = yield* charges("2001:db8:5:1::1", 5)
      expect(refused.some(charged)).toBe(false)
      expect(yield* failures.refusedFor("2001:db8:5:2::1")).toBe(0)
      // A second network of the site spends its own: the site has had two networks' worth.
      const second = yield* failTimes("2001:db8:5:2::1", allowed)
      // So a third network of it, which has failed nothing, is refused, and that costs it nothing of its own.
      expect(yield* failures.refusedFor("2001:db8:5:3::1")).toBeGreaterThan(0)
      expect(yield* charges("2001:db8:5:3::1", 3 * allowed)).toSatisfy((all) => !all.some(charged))
      // A network of another /48, and an IPv4 address, are not.
      expect(yield* failures.refusedFor("2001:db8:6:1::1")).toBe(0)
      yield* failTimes("2001:db8:6:1::1", 1)
      yield* failTimes("198.51.100.5", 1)
      // Failures given back to the site (their tokens were valid after all) let as many more through.
      yield* Effect.forEach(second.slice(0, 2), (charge) => charge.forgive)
      expect(yield* failures.refusedFor("2001:db8:5:3::1")).toBe(0)
      yield* failTimes("2001:db8:5:4::1", 2)
      expect(yield* failures.refusedFor("2001:db8:5:3::1")).toBeGreaterThan(0)
      // The site's window ends, its networks' with it; the third network's refusals left it its allowance.
      vi.advanceTimersByTime(WINDOW_MS)
      yield* failTimes("2001:db8:5:3::1", allowed)
      expect(yield* failures.refusedFor("2001:db8:5:3::1")).toBeGreaterThan(0)
      expect(yield* failures.refusedFor("2001:db8:5:1::1")).toBe(0)
    }).pipe(Effect.provide(FailedAuthentications.layer(1))),
  )

  it.effect("lets no network spend its site's allowance across windows of its own", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      const allowed = FAILED_AUTHENTICATIONS_WINDOW_SECONDS
      // A neighbour's one failure opens the site's window; a network then fails half a window later, as much
      // as it may, and again once half a window more has gone by.
      yield* failTimes("2001:db8:7:1::1", 1)
      vi.advanceTimersByTime(WINDOW_MS / 2)
      yield* failTimes("2001:db8:7:2::1", allowed)
      vi.advanceTimersByTime(WINDOW_MS / 2 - 1)
      // Still the site's first window: the network is refused, and the neighbour's next networks are not.
      expect((yield* charges("2001:db8:7:2::1", 1)).some(charged)).toBe(false)
      expect(yield* failures.refusedFor("2001:db8:7:3::1")).toBe(0)
      vi.advanceTimersByTime(1)
      // A new window of the site, for every network of it: the network spends its allowance again, no more.
      yield* failTimes("2001:db8:7:2::1", allowed)
      expect((yield* charges("2001:db8:7:2::1", allowed)).some(charged)).toBe(false)
      expect(yield* failures.refusedFor("2001:db8:7:3::1")).toBe(0)
      yield* failTimes("2001:db8:7:3::1", allowed)
    }).pipe(Effect.provide(FailedAuthentications.layer(1))),
  )

  it("keeps only the windows that have not ended, whatever came before", () => {
    const windows = failureWindows(1)
    const start = Date.now()
    // Many networks, each failing once: an attack from many addresses.
    for (let n = 0; n < 5_000; n++) {
      expect(windows.charge(`198.18.${n >> 8}.${n & 255}`, start)._tag).toBe("Charged")
    }
    expect(windows.held()).toBe(5_000)
    // Their windows end: the next call of any kind lets them all go, and keeps what is live.
    const later = start + WINDOW_MS
    expect(windows.refusedFor("203.0.113.1", later)).toBe(0)
    expect(windows.held()).toBe(0)
    for (let n = 0; n < 5_000; n++) {
      expect(windows.charge(`198.19.${n >> 8}.${n & 255}`, later + n)._tag).toBe("Charged")
    }
    expect(windows.held()).toBe(5_000)
    expect(windows.charge("198.18.0.1", later + WINDOW_MS + 2_500)._tag).toBe("Charged")
    expect(windows.held()).toBe(5_000 - 2_500)
  })

  it("reads a clock stepped back as the time already reached", () => {
    const windows = failureWindows(1)
    const start = Date.now()
    for (let n = 0; n < FAILED_AUTHENTICATIONS_WINDOW_SECONDS; n++) windows.charge("203.0.113.30", start)
    expect(windows.refusedFor("203.0.113.30", start - 60_000)).toBe(FAILED_AUTHENTICATIONS_WINDOW_SECONDS)
    expect(windows.refusedFor("203.0.113.30", start + WINDOW_MS)).toBe(0)
  })

  it.effect("refuses nothing when its limit is 0 (off)", () =>
    Effect.gen(function* () {
      const failures = yield* FailedAuthentications
      yield* failTimes("203.0.113.9", 1000)
      expect(yield* failures.refusedFor("203.0.113.9")).toBe(0)
    }).pipe(Effect.provide(FailedAuthentications.layer(0))),
  )
})
