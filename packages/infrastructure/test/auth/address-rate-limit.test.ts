import { SqlClient } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  addressRateLimitKey,
  addressRateLimitPolicy,
  consumeAddressRateLimit,
  consumeSiteRateLimit,
  consumeSourceRateLimits,
  giveBackRateLimitCell,
  NETWORKS_PER_SITE,
  type RateLimitDecision,
  siteRateLimitKey,
  siteRateLimitPolicy,
  sourceNetworkOf,
  sourceSiteOf,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"

describe("sourceNetworkOf", () => {
  it("counts an IPv4 address alone, as itself or mapped into IPv6", () => {
    expect(sourceNetworkOf("203.0.113.7")).toBe("203.0.113.7")
    expect(sourceNetworkOf("::ffff:203.0.113.7")).toBe("203.0.113.7")
    expect(sourceNetworkOf("203.0.113.8")).not.toBe(sourceNetworkOf("203.0.113.7"))
  })

  it("counts an IPv6 address by its /64, however it is written", () => {
    const network = sourceNetworkOf("2001:db8:1:2::1")
    expect(network).toBe("2001:db8:1:2::/64")
    expect(sourceNetworkOf("2001:0db8:0001:0002:ffff:ffff:ffff:ffff")).toBe(network)
    expect(sourceNetworkOf("2001:DB8:1:2:0:0:0:99")).toBe(network)
    expect(sourceNetworkOf("2001:db8:1:3::1")).not.toBe(network)
    expect(sourceNetworkOf("::1")).toBe("::/64")
  })

  it("puts an IPv6 address in its /48, and an IPv4 address (or text that is not one) in no site", () => {
    const site = sourceSiteOf("2001:db8:1:2::1")
    expect(site).toBe("2001:db8:1::/48")
    expect(sourceSiteOf("2001:0DB8:0001:ffff:ffff:ffff:ffff:ffff")).toBe(site)
    expect(sourceSiteOf("2001:db8:2:2::1")).not.toBe(site)
    expect(sourceSiteOf("203.0.113.7")).toBeUndefined()
    expect(sourceSiteOf("::ffff:203.0.113.7")).toBeUndefined()
    expect(sourceSiteOf("unknown")).toBeUndefined()
  })

  it("lets text that is not an address stand for itself", () => {
    expect(sourceNetworkOf("unknown")).toBe("unknown")
    expect(addressRateLimitKey("unknown")).toBe("address:unknown")
  })
})

layer(testDatabase(), { excludeTestServices: true })("consumeAddressRateLimit", (it) => {
  it.effect("gives one network one bucket of twice its rate, whichever of its addresses asks", () =>
    Effect.gen(function* () {
      expect(addressRateLimitPolicy(2)).toEqual({ ratePerSecond: 2, burst: 4 })
      // A bucket of 4 that refills once in 1000 s: no refill between the statements, however slow the machine.
      const policy = { ratePerSecond: 0.001, burst: 4 }
      const addresses = ["2001:db8:9:9::1", "2001:db8:9:9::2", "2001:db8:9:9:a::3", "2001:db8:9:9::4"]
      const decisions = yield* Effect.forEach(addresses, (address) =>
        consumeAddressRateLimit(address, policy),
      )
      expect(decisions.every((decision) => decision.allowed)).toBe(true)
      expect(decisions.map((decision) => decision.limit)).toEqual([4, 4, 4, 4])
      // The bucket of the /64 is empty now; a fifth address in it is refused, one next door is not.
      expect((yield* consumeAddressRateLimit("2001:db8:9:9::5", policy)).allowed).toBe(false)
      expect((yield* consumeAddressRateLimit("2001:db8:9:8::5", policy)).allowed).toBe(true)
    }),
  )

  it.effect(
    "gives the networks of one IPv6 /48 one bucket of NETWORKS_PER_SITE times their rate and burst",
    () =>
      Effect.gen(function* () {
        const policy = { ratePerSecond: 0.001, burst: 2 }
        expect(siteRateLimitPolicy(policy)).toEqual({ ratePerSecond: 0.001 * NETWORKS_PER_SITE, burst: 4 })
        const siteLimit = policy.burst * NETWORKS_PER_SITE
        // One address from each of siteLimit networks of the site: each network's bucket has room, the site's
        // empties.
        const networks = Array.from({ length: siteLimit }, (_, n) => `2001:db8:7:${n + 1}::1`)
        const decisions = yield* Effect.forEach(networks, (address) => consumeSiteRateLimit(address, policy))
        expect(decisions.map((decision) => decision?.allowed)).toEqual(networks.map(() => true))
        expect(decisions.map((decision) => decision?.limit)).toEqual(networks.map(() => siteLimit))
        // Refilled at twice the network's rate: siteLimit cells are paid back in half the time theirs would be.
        const emissionSeconds = 1 / (policy.ratePerSecond * NETWORKS_PER_SITE)
        expect(decisions[0]?.resetSeconds).toBe(emissionSeconds)
        expect(decisions.at(-1)?.resetSeconds).toBe(siteLimit * emissionSeconds)
        expect((yield* consumeSiteRateLimit("2001:db8:7:ff::1", policy))?.allowed).toBe(false)
        expect((yield* consumeSiteRateLimit("2001:db8:8:1::1", policy))?.allowed).toBe(true)
        // An IPv4 address has no site: its network's bucket is all there is.
        expect(yield* consumeSiteRateLimit("203.0.113.50", policy)).toBeUndefined()
      }),
  )

  it.effect("takes a request from its network's and its site's buckets, all or none", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const policy = { ratePerSecond: 0.001, burst: 2 }
      const summary = (decisions: ReadonlyArray<readonly [string, RateLimitDecision]>) =>
        decisions.map(
          ([name, decision]) => `${name} ${decision.allowed ? "allowed" : "refused"} r=${decision.remaining}`,
        )
      const [a, b, c] = ["2001:db8:c:1::1", "2001:db8:c:2::1", "2001:db8:c:3::1"]
      expect(summary(yield* consumeSourceRateLimits(a, policy))).toEqual([
        "address allowed r=1",
        "site allowed r=3",
      ])
      expect(summary(yield* consumeSourceRateLimits(a, policy))).toEqual([
        "address allowed r=0",
        "site allowed r=2",
      ])
      // A's own bucket is empty: refused there, and its site's is not asked.
      const siteKey = siteRateLimitKey(sourceSiteOf(a) ?? "")
      const siteBefore = yield* sql<{ tat: Date }>`SELECT tat FROM rate_limits WHERE key = ${siteKey}`
      expect(summary(yield* consumeSourceRateLimits(a, policy))).toEqual(["address refused r=0"])
      expect(yield* sql<{ tat: Date }>`SELECT tat FROM rate_limits WHERE key = ${siteKey}`).toEqual(
        siteBefore,
      )
      expect(summary(yield* consumeSourceRateLimits(b, policy))).toEqual([
        "address allowed r=1",
        "site allowed r=1",
      ])
      expect(summary(yield* consumeSourceRateLimits(b, policy))).toEqual([
        "address allowed r=0",
        "site allowed r=0",
      ])
      // The site's bucket is empty: C is refused there, and its own cell is given back (its bucket full again).
      expect(summary(yield* consumeSourceRateLimits(c, policy))).toEqual([
        "address allowed r=2",
        "site refused r=0",
      ])
      expect((yield* consumeAddressRateLimit(c, policy)).remaining).toBe(1)
      // A cell given back to a bucket that has refilled meanwhile leaves it full, no fuller; and to one that
      // was reaped (a full bucket has no row to keep), the same.
      const cKey = addressRateLimitKey(c)
      yield* sql`UPDATE rate_limits SET tat = decided_at WHERE key = ${cKey}`
      const refilled = yield* giveBackRateLimitCell(cKey, policy)
      expect([refilled.remaining, refilled.resetSeconds]).toEqual([policy.burst, 0])
      yield* sql`DELETE FROM rate_limits WHERE key = ${cKey}`
      const reaped = yield* giveBackRateLimitCell(cKey, policy)
      expect([reaped.allowed, reaped.remaining, reaped.resetSeconds]).toEqual([true, policy.burst, 0])
      // From IPv4, the address's bucket alone.
      expect(summary(yield* consumeSourceRateLimits("203.0.113.60", policy))).toEqual(["address allowed r=1"])
    }),
  )
})
