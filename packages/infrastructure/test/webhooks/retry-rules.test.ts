import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import {
  checkedLookup,
  DEFAULT_RETRY_SCHEDULE,
  literalTargetProblem,
  MAX_RETRY_AFTER_SECONDS,
  PrivateTargetRefused,
  parseRetrySchedule,
  retryAfterSeconds,
  secondsUntilNextAttempt,
  sendWebhook,
} from "../../src/index.js"

describe("retry schedule", () => {
  it("reads comma-separated seconds, the first attempt at once", () => {
    expect(parseRetrySchedule("0,1,1")).toEqual(Either.right([0, 1, 1]))
    expect(parseRetrySchedule(" 0, 5 ,300")).toEqual(Either.right([0, 5, 300]))
    expect(parseRetrySchedule(DEFAULT_RETRY_SCHEDULE.join(","))).toEqual(Either.right(DEFAULT_RETRY_SCHEDULE))
  })

  it("refuses anything else, naming the variable and the problem", () => {
    const problem = (text: string) => Either.getLeft(parseRetrySchedule(text))
    expect(problem("")._tag).toBe("Some")
    expect(problem("0,abc")).toEqual(
      expect.objectContaining({
        value: expect.stringContaining("WEBHOOK_RETRY_SCHEDULE must be comma-separated"),
      }),
    )
    expect(problem("0,-5")._tag).toBe("Some")
    expect(problem("0,1.5")._tag).toBe("Some")
    expect(problem("5,10")).toEqual(
      expect.objectContaining({ value: expect.stringContaining("must start with 0") }),
    )
    // However many digits: too long a wait, not a malformed number.
    for (const wait of ["999999", "99999999", "9".repeat(30)]) {
      expect(problem(`0,${wait}`)).toEqual(
        expect.objectContaining({ value: expect.stringContaining("must not wait more than") }),
      )
    }
    expect(problem(Array.from({ length: 51 }, () => "0").join(","))._tag).toBe("Some")
  })

  it("schedules the next attempt from the schedule, or the later Retry-After, and none after the last", () => {
    const schedule = [0, 5, 300]
    expect(secondsUntilNextAttempt(schedule, 1, null)).toBe(5)
    expect(secondsUntilNextAttempt(schedule, 2, null)).toBe(300)
    expect(secondsUntilNextAttempt(schedule, 3, null)).toBeNull()
    expect(secondsUntilNextAttempt(schedule, 1, 60)).toBe(60)
    expect(secondsUntilNextAttempt(schedule, 2, 60)).toBe(300)
    expect(secondsUntilNextAttempt(schedule, 1, 10 * 86_400)).toBe(MAX_RETRY_AFTER_SECONDS)
    expect(secondsUntilNextAttempt(schedule, 3, 60)).toBeNull()
  })
})

describe("Retry-After", () => {
  const now = new Date("2025-06-01T12:00:00Z")
  it("reads delay-seconds and HTTP dates", () => {
    expect(retryAfterSeconds("120", now)).toBe(120)
    expect(retryAfterSeconds(" 0 ", now)).toBe(0)
    expect(retryAfterSeconds("Sun, 01 Jun 2025 12:01:30 GMT", now)).toBe(90)
    expect(retryAfterSeconds("Sun, 01 Jun 2025 11:00:00 GMT", now)).toBe(0)
  })
  it("ignores what is absent or unreadable", () => {
    expect(retryAfterSeconds(undefined, now)).toBeNull()
    expect(retryAfterSeconds("soon", now)).toBeNull()
    expect(retryAfterSeconds("-5", now)).toBeNull()
    expect(retryAfterSeconds("2025-06-01", now)).toBeNull()
  })
})

describe("checked lookup", () => {
  const resolve = (allowPrivateTargets: boolean, host: string) =>
    new Promise<{ error: Error | null; address: unknown }>((done) =>
      checkedLookup(allowPrivateTargets)(host, {}, (error, address) => done({ error, address })),
    )

  it("refuses a name that resolves to a loopback address, unless private targets are allowed", async () => {
    const refused = await resolve(false, "localhost")
    expect(refused.error).toBeInstanceOf(PrivateTargetRefused)
    // Which address it resolved to is not said: a partner reads the error in its deliveries.
    expect(refused.error?.message).toBe("refused: localhost is a private, loopback or link-local address")
    const allowed = await resolve(true, "localhost")
    expect(allowed.error).toBeNull()
    expect(["127.0.0.1", "::1"]).toContain(allowed.address)
  })

  it("refuses reserved addresses and 6to4 or NAT64 forms of private ones at delivery too", async () => {
    for (const address of [
      "203.0.113.5",
      "192.88.99.1",
      "2001:db8::1",
      "::127.0.0.1",
      "2002:a00:1::",
      "64:ff9b:1::a00:1",
      "::ffff:0:7f00:1",
      "2001::1",
    ]) {
      expect((await resolve(false, address)).error, address).toBeInstanceOf(PrivateTargetRefused)
      const host = address.includes(":") ? `[${address}]` : address
      expect(literalTargetProblem(new URL(`https://${host}/hooks`), false), address).toBeInstanceOf(
        PrivateTargetRefused,
      )
    }
    for (const address of ["8.8.8.8", "2606:4700::1111", "2002:808:808::"]) {
      expect((await resolve(false, address)).error, address).toBeNull()
    }
  })
})

describe("sendWebhook", () => {
  it.effect("refuses plain http where private targets are not allowed, without connecting", () =>
    Effect.gen(function* () {
      const outcome = yield* sendWebhook({
        url: "http://8.8.8.8/hooks",
        body: "{}",
        headers: { "webhook-id": "msg_1", "webhook-timestamp": "0", "webhook-signature": "v1,x" },
        timeout: "2 seconds",
        allowPrivateTargets: false,
      })
      expect(outcome).toMatchObject({
        _tag: "NoAnswer",
        error: "refused: plain http is allowed only for local development (WEBHOOK_ALLOW_PRIVATE_TARGETS)",
      })
    }),
  )
})
