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
      let refusal: Buffer | undefined
      const server = createServer((client) => {
        if (refusal !== undefined) {
          const answer = refusal
          // The client's startup message first, then the server's refusal, as PostgreSQL answers it.
          client.once("data", () => client.end(answer))
          client.on("error", () => client.destroy())
          return
        }
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
      // Every connection dropped, and each new one refused by "PostgreSQL" with `sqlstate`, as a server
      // starting up (57P03) or shutting down does, until restore.
      const refuseWith = (sqlstate: string, message: string) => {
        refusal = errorResponse(sqlstate, message)
        for (const socket of sockets) socket.destroy()
      }
      const restore = async () => {
        if (refusal !== undefined) {
          refusal = undefined
          return proxyPort
        }
        return listen(proxyPort)
      }
      return { port: proxyPort, cut, refuseWith, restore }
    }),
    (proxy) => Effect.promise(() => proxy.cut()),
  )

// A FATAL ErrorResponse message of the PostgreSQL protocol: 'E', its length, then the fields (S, V, C, M).
const errorResponse = (sqlstate: string, message: string) => {
  const fields = Buffer.concat(
    [
      ["S", "FATAL"],
      ["V", "FATAL"],
      ["C", sqlstate],
      ["M", message],
    ]
      .map(([type, value]) => Buffer.from(`${type}${value}\0`, "utf8"))
      .concat(Buffer.from([0])),
  )
  const length = Buffer.alloc(4)
  length.writeInt32BE(fields.length + 4)
  return Buffer.concat([Buffer.from("E"), length, fields])
}
