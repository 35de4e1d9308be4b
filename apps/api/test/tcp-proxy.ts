import { type AddressInfo, connect, createServer, type Socket } from "node:net"
import { Effect } from "effect"

/**
 * A TCP proxy to `host:port` on a port of its own, that a test can cut (every connection dropped, new ones
 * refused) and restore (listening again on the same port): the database out of reach and back, as a network
 * failure or a database restart looks to the API.
 */
export const tcpProxy = (host: string, port: number) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const sockets = new Set<Socket>()
      const server = createServer((client) => {
        const upstream = connect(port, host)
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.once("close", () => sockets.delete(socket))
          socket.on("error", () => {
            client.destroy()
            upstream.destroy()
          })
        }
        client.pipe(upstream)
        upstream.pipe(client)
      })
      const listen = (at: number) =>
        new Promise<number>((resolve, reject) => {
          server.once("error", reject)
          server.listen(at, "127.0.0.1", () => {
            server.off("error", reject)
            resolve((server.address() as AddressInfo).port)
          })
        })
      const proxyPort = await listen(0)
      const cut = () =>
        new Promise<void>((resolve) => {
          server.close(() => resolve())
          for (const socket of sockets) socket.destroy()
        })
      return { port: proxyPort, cut, restore: () => listen(proxyPort) }
    }),
    (proxy) => Effect.promise(() => proxy.cut()),
  )
