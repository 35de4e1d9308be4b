// Runs the README's example (readme-example.ts) against a stand-in for the API.
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { clientOf, document } from "./readme-example.js"

// A stand-in for the API: answers every request 404 LE0002 in the published format, and keeps what it got.
const standIn = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly seen: Array<Seen>; readonly close: () => Promise<void> }>(
    (resume) => {
      const seen: Array<Seen> = []
      const server = createServer((request, response) => {
        seen.push({ url: request.url, authorization: request.headers.authorization })
        response.writeHead(404, { "content-type": "application/json" })
        response.end(JSON.stringify({ errors: [{ id: "e-1", code: "LE0002", message: "user not found" }] }))
      })
      const close = () => new Promise<void>((done) => server.close(() => done()))
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, seen, close }))
      })
    },
  ),
  (standIn) => Effect.promise(standIn.close),
)

interface Seen {
  readonly url: string | undefined
  readonly authorization: string | undefined
}

describe("the http-api README's example", () => {
  it("gives the OpenAPI 3.1 document with every published path", () => {
    expect(document.openapi).toBe("3.1.0")
    expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(["/api/users", "/api/points/add"]))
  })

  it.scoped("derives a client that sends the bearer and reads an error answer as the contract's error", () =>
    Effect.gen(function* () {
      const server = yield* standIn
      const client = yield* clientOf(server.url, "pos_at_example")
      const refused = yield* Effect.flip(
        client.users.getUser({ path: { user_id: "0190a000-0000-7000-8000-000000000001" } }),
      )
      expect(refused).toMatchObject({ _tag: "ApiError", status: 404, errors: [{ code: "LE0002" }] })
      expect(server.seen).toEqual([
        { url: "/api/users/0190a000-0000-7000-8000-000000000001", authorization: "Bearer pos_at_example" },
      ])
    }),
  )
})
