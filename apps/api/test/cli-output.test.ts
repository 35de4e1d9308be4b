import { Writable } from "node:stream"
import { describe, expect, it } from "@effect/vitest"
import { printable } from "../src/cli/output.js"
import { watchOutput, whenWritten } from "../src/cli/stdout-failure.js"

// A stream whose writes wait until the test settles them, as a pipe whose reader is slow takes them.
const heldStream = () => {
  const pending: Array<(error?: Error) => void> = []
  const stream = new Writable({
    highWaterMark: 4,
    write: (_chunk, _encoding, callback) => {
      pending.push(callback)
    },
  })
  return { stream, settleNext: (error?: Error) => pending.shift()?.(error) }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe("The admin CLI's output", () => {
  it("is known written or refused before the process exits, however late a queued write fails", async () => {
    const { stream, settleNext } = heldStream()
    const failure = watchOutput(stream)
    stream.write("more than the stream takes at once")
    let told = false
    const settled = new Promise<void>((resolve) =>
      whenWritten(stream, () => {
        told = true
        resolve()
      }),
    )
    await nextTurn()
    // Still queued: the exit waits.
    expect(told).toBe(false)
    settleNext(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }))
    await settled
    expect(failure()?.code).toBe("EPIPE")
  })

  it("with nothing queued, exits on the next turn, and no failure is on record", async () => {
    const { stream } = heldStream()
    const failure = watchOutput(stream)
    await new Promise<void>((resolve) => whenWritten(stream, resolve))
    expect(failure()).toBeUndefined()
  })

  it("shows control characters and direction marks of a value as escapes, and none as -", () => {
    expect(printable("Old\nid\u001b[31m\u202eabc\u0085")).toBe("Old\\u{a}id\\u{1b}[31m\\u{202e}abc\\u{85}")
    expect(printable("é 日本 😀")).toBe("é 日本 😀")
    expect(printable(null)).toBe("-")
    expect(printable(20)).toBe("20")
  })
})
