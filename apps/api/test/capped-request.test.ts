import { Socket } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import {
  bodyBytesArriving,
  CappedRequest,
  MAX_BODY_BYTES,
  MAX_BUFFERED_BODY_BYTES_PER_NETWORK,
  MAX_BUFFERED_BODY_BYTES_PER_SITE,
  networksWithBodiesArriving,
} from "../src/http/capped-request.js"
import { bodiesOverBudget } from "../src/http/server-middleware.js"

// A request as Node's server makes one, its connection from `address`: its body is pushed by the test, as
// the server's parser pushes what the socket brings. (Loopback has one IPv6 address, ::1, so the networks of
// a site cannot be told apart over real sockets.)
const requestFrom = (address: string) => {
  const socket = new Socket()
  Object.defineProperty(socket, "remoteAddress", { value: address })
  const request = new CappedRequest(socket)
  request.url = "/api/users"
  return request
}

describe("CappedRequest's shares of the body budget", () => {
  it("holds the networks of one IPv6 /48 to two networks' shares together, and gives everything back", () => {
    expect(MAX_BUFFERED_BODY_BYTES_PER_SITE).toBe(2 * MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
    // The budget is the process's, shared with any file of this worker: read as deltas.
    const bytesBefore = bodyBytesArriving()
    const networksBefore = networksWithBodiesArriving()
    const made: Array<CappedRequest> = []
    const from = (address: string) => {
      const request = requestFrom(address)
      made.push(request)
      return request
    }
    const holding = (address: string, bytes: number) =>
      Array.from({ length: bytes / MAX_BODY_BYTES }, () => {
        const request = from(address)
        request.push(Buffer.alloc(MAX_BODY_BYTES))
        expect(request.overBudget).toBeUndefined()
        return request
      })
    try {
      const first = holding("2001:db8:a:1::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
      // The network's share is full: its next byte is refused, for its network.
      const overNetwork = from("2001:db8:a:1::2")
      overNetwork.push(Buffer.alloc(1))
      expect(overNetwork.overBudget).toBe("network")
      // A second network of the site has a share of its own, and fills the site's.
      holding("2001:db8:a:2::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
      // A third network of the site, which holds nothing, is refused: for its site.
      const overSite = from("2001:db8:a:3::1")
      overSite.push(Buffer.alloc(1))
      expect(overSite.overBudget).toBe("site")
      // Another /48's network, and an IPv4 address (no site), are not.
      for (const request of [from("2001:db8:b:1::1"), from("203.0.113.9")]) {
        request.push(Buffer.alloc(1))
        expect(request.overBudget).toBeUndefined()
      }
      expect(networksWithBodiesArriving() - networksBefore).toBe(4)
      expect(bodyBytesArriving() - bytesBefore).toBe(2 * MAX_BUFFERED_BODY_BYTES_PER_NETWORK + 2)
      // One body of the site gone: the third network's next body is read.
      first[0]?.destroy()
      const after = from("2001:db8:a:3::1")
      after.push(Buffer.alloc(MAX_BODY_BYTES))
      expect(after.overBudget).toBeUndefined()
      // Every body gone: nothing is held, no network has an entry left.
      for (const request of made) request.destroy()
      expect(bodyBytesArriving()).toBe(bytesBefore)
      expect(networksWithBodiesArriving()).toBe(networksBefore)
      // And the site's share is whole again.
      holding("2001:db8:a:4::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
      holding("2001:db8:a:5::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
    } finally {
      for (const request of made) request.destroy()
    }
    expect(bodyBytesArriving()).toBe(bytesBefore)
  })
  it("answers each refusal with whose share it went past", () => {
    const messages = (["process", "network", "site"] as const).map((budget) => {
      const error = bodiesOverBudget(budget)
      expect(error.status).toBe(503)
      expect(error.errors.map((entry) => entry.code)).toEqual(["SV5003"])
      return error.errors[0].message
    })
    expect(messages).toEqual([
      "service unavailable: too many request bodies are arriving at once; retry later",
      "service unavailable: too many request bodies are arriving at once from your network; retry later",
      "service unavailable: too many request bodies are arriving at once from your IPv6 /48; retry later",
    ])
  })
})
