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

// Requests from `address` each holding the largest body (not yet all arrived), as many as `bytes` takes.
const holding = (address: string, bytes: number) =>
  Array.from({ length: bytes / MAX_BODY_BYTES }, () => {
    const request = requestFrom(address)
    request.push(Buffer.alloc(MAX_BODY_BYTES))
    expect(request.overBudget).toBeUndefined()
    return request
  })

describe("CappedRequest's shares of the body budget", () => {
  it("holds the networks of one IPv6 /48 to two networks' shares together, and gives everything back", () => {
    expect(MAX_BUFFERED_BODY_BYTES_PER_SITE).toBe(2 * MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
    const first = holding("2001:db8:a:1::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
    // The network's share is full: its next byte is refused, for its network.
    const overNetwork = requestFrom("2001:db8:a:1::2")
    overNetwork.push(Buffer.alloc(1))
    expect(overNetwork.overBudget).toBe("network")
    // A second network of the site has a share of its own, and fills the site's.
    const second = holding("2001:db8:a:2::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK)
    // A third network of the site, which holds nothing, is refused: for its site.
    const overSite = requestFrom("2001:db8:a:3::1")
    overSite.push(Buffer.alloc(1))
    expect(overSite.overBudget).toBe("site")
    // Another /48's network, and an IPv4 address (no site), are not.
    const elsewhere = [requestFrom("2001:db8:b:1::1"), requestFrom("203.0.113.9")]
    for (const request of elsewhere) {
      request.push(Buffer.alloc(1))
      expect(request.overBudget).toBeUndefined()
    }
    expect(networksWithBodiesArriving()).toBe(4)
    expect(bodyBytesArriving()).toBe(2 * MAX_BUFFERED_BODY_BYTES_PER_NETWORK + 2)
    // One body of the site gone: the third network's next body is read.
    first[0]?.destroy()
    const after = requestFrom("2001:db8:a:3::1")
    after.push(Buffer.alloc(MAX_BODY_BYTES))
    expect(after.overBudget).toBeUndefined()
    // Every body gone: nothing is held, no network has an entry left.
    for (const request of [...first, ...second, overNetwork, overSite, ...elsewhere, after]) request.destroy()
    expect(bodyBytesArriving()).toBe(0)
    expect(networksWithBodiesArriving()).toBe(0)
    // And the site's share is whole again.
    const again = [
      ...holding("2001:db8:a:4::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK),
      ...holding("2001:db8:a:5::1", MAX_BUFFERED_BODY_BYTES_PER_NETWORK),
    ]
    for (const request of again) request.destroy()
    expect(bodyBytesArriving()).toBe(0)
  })
})
