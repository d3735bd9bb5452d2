import { createConnection, createServer, type Socket } from 'node:net'
import { until } from '../harness.ts'

/**
 * A loopback TCP proxy between a client and a real server that loses one answer: the request
 * whose first line matches goes through, the proxy waits until `committed()` holds (the write is
 * in the database), then drops the client's connection before a byte of the answer reaches it.
 * Everything else passes both ways untouched. What a flaky network or a proxy restart does to a
 * write the server already applied.
 */
export interface DroppingProxy {
  url: string
  /** Answers lost so far (at most one per `drop`). */
  readonly dropped: number
  /** Loses the answer to the next request whose first line starts with `requestLine`. */
  drop(requestLine: string, committed: () => boolean): void
  close(): void
}

export async function startDroppingProxy(target: string): Promise<DroppingProxy> {
  const upstream = new URL(target)
  let armed: { line: string; committed: () => boolean } | undefined
  let dropped = 0
  const sockets = new Set<Socket>()
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
  }
  const server = createServer((client) => {
    const toServer = createConnection({ host: upstream.hostname, port: Number(upstream.port) })
    track(client)
    track(toServer)
    let victim = false
    client.on('data', (bytes: Buffer) => {
      if (armed && bytes.toString('latin1').startsWith(armed.line)) {
        victim = true
        const rule = armed
        armed = undefined
        toServer.once('data', async () => {
          // The server answers only after its commit; waiting for it here says so explicitly.
          await until(rule.committed, 10_000)
          dropped++
          client.destroy()
          toServer.destroy()
        })
      }
      toServer.write(bytes)
    })
    toServer.on('data', (bytes: Buffer) => {
      if (!victim && !client.destroyed) client.write(bytes)
    })
    client.on('end', () => toServer.end())
    toServer.on('end', () => client.end())
    client.on('close', () => toServer.destroy())
    toServer.on('close', () => client.destroy())
  })
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  )
  return {
    url: `http://127.0.0.1:${port}`,
    get dropped() {
      return dropped
    },
    drop(line, committed) {
      armed = { line, committed }
    },
    close() {
      for (const socket of sockets) socket.destroy()
      server.close()
    },
  }
}
