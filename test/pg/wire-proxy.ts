// test-needs: postgres
// (a helper of the Postgres tests: a loopback TCP proxy in front of a test cluster.)
import type { Socket, TCPSocketListener } from 'bun'

/**
 * A loopback TCP proxy between a client and Postgres that reads the wire protocol both ways:
 * each request of the client (a simple query, or the extended messages up to their Sync) and
 * each answer of the server (up to its ReadyForQuery). With `hold` set, it keeps back the
 * answer to a request `held` picks until the client has sent another request after it: a
 * client that waits for that answer before it sends its next statement then waits for ever,
 * and the test's bound fails it. That is how a test proves, without timing anything, that a
 * client's statements go down the connection without an answer in between (pipelined).
 */
export interface WireProxy {
  /** The cluster's URL with the proxy's port. */
  readonly url: string
  /** Keeping back the answers `held` picks, from now on. */
  hold: boolean
  /** Keeps nothing back any more, and passes on what it kept. */
  unhold(): void
  /** Requests seen, by their text (a bound statement's is the text it was prepared from). */
  readonly requests: string[]
  close(): void
}

const SSL_REQUEST = 80877103
const GSS_REQUEST = 80877104

export function wireProxy(target: string, held: (text: string) => boolean): WireProxy {
  const upstream = new URL(target)
  const links = new Set<Link>()
  const proxy: WireProxy = {
    url: '',
    hold: false,
    unhold: () => {
      proxy.hold = false
      for (const link of links) link.release()
    },
    requests: [],
    close: () => listener.stop(true),
  }
  const listener: TCPSocketListener<Link> = Bun.listen<Link>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      open(client) {
        const link = new Link(proxy, held, client)
        links.add(link)
        client.data = link
        void Bun.connect<Link>({
          hostname: upstream.hostname,
          port: Number(upstream.port),
          socket: {
            open(server) {
              server.data = link
              link.connected(server)
            },
            data: (_, bytes) => link.fromServer(bytes),
            drain: (server) => link.flush(server),
            close: () => link.end(),
            error: () => link.end(),
          },
        })
      },
      data: (client, bytes) => client.data.fromClient(bytes),
      drain: (client) => client.data.flush(client),
      close: (client) => client.data.end(),
      error: (client) => client.data.end(),
    },
  })
  const url = new URL(target)
  url.port = String(listener.port)
  return Object.assign(proxy, { url: url.toString() })
}

/** One proxied connection. */
class Link {
  private server: Socket<Link> | undefined
  private readonly toServer: Uint8Array[] = []
  private readonly outbox = new Map<Socket<Link>, Uint8Array[]>()
  private clientBuf: Uint8Array = new Uint8Array(0)
  private serverBuf: Uint8Array = new Uint8Array(0)
  /** Bytes of the answer being read, not passed on yet. */
  private answer: Uint8Array[] = []
  /** Answers kept back (and every answer after the first of them), in order. */
  private readonly kept: { index: number; bytes: Uint8Array[] }[] = []
  private startup = true
  private skipServerByte = 0
  private readonly statements = new Map<string, string>()
  /** This connection's requests, by their text; the first is its startup. */
  private readonly mine: string[] = []
  private answered = 0
  private pending: { parse?: string; bind?: string } = {}

  constructor(
    private readonly proxy: WireProxy,
    private readonly held: (text: string) => boolean,
    private readonly client: Socket<Link>,
  ) {}

  connected(server: Socket<Link>): void {
    this.server = server
    for (const bytes of this.toServer.splice(0)) this.write(server, bytes)
  }

  fromClient(bytes: Uint8Array): void {
    this.clientBuf = concat(this.clientBuf, bytes)
    for (;;) {
      const buf = this.clientBuf
      if (this.startup) {
        if (buf.length < 8) break
        const length = view(buf).getInt32(0)
        if (buf.length < length) break
        const code = view(buf).getInt32(4)
        // An SSL or GSS request is answered by one byte, and the startup message follows.
        if (code === SSL_REQUEST || code === GSS_REQUEST) this.skipServerByte++
        else {
          this.startup = false
          this.request('(startup)')
        }
        this.clientBuf = buf.subarray(length)
        continue
      }
      if (buf.length < 5) break
      const length = view(buf).getInt32(1) + 1
      if (buf.length < length) break
      this.clientMessage(String.fromCharCode(buf[0] as number), buf.subarray(5, length))
      this.clientBuf = buf.subarray(length)
    }
    if (this.server) this.write(this.server, bytes)
    else this.toServer.push(bytes)
    this.release()
  }

  private clientMessage(type: string, body: Uint8Array): void {
    const strings = cStrings(body)
    if (type === 'Q') this.request(strings[0] ?? '')
    else if (type === 'P') {
      this.statements.set(strings[0] ?? '', strings[1] ?? '')
      this.pending.parse = strings[1]
    } else if (type === 'B') this.pending.bind = this.statements.get(strings[1] ?? '')
    else if (type === 'S') {
      this.request(this.pending.bind ?? this.pending.parse ?? '(sync)')
      this.pending = {}
    }
  }

  private request(text: string): void {
    this.mine.push(text)
    if (text !== '(startup)') this.proxy.requests.push(text)
  }

  fromServer(bytes: Uint8Array): void {
    let from = 0
    while (this.skipServerByte > 0 && from < bytes.length) {
      this.skipServerByte--
      this.pass([bytes.subarray(from, from + 1)])
      from++
    }
    this.serverBuf = concat(this.serverBuf, bytes.subarray(from))
    for (;;) {
      const buf = this.serverBuf
      if (buf.length < 5) break
      const length = view(buf).getInt32(1) + 1
      if (buf.length < length) break
      this.answer.push(buf.slice(0, length))
      this.serverBuf = buf.subarray(length)
      if (buf[0] !== 0x5a) continue // ReadyForQuery ends an answer
      const index = this.answered++
      const whole = this.answer
      this.answer = []
      if (this.kept.length > 0 || this.keep(index)) this.kept.push({ index, bytes: whole })
      else this.pass(whole)
    }
  }

  /** Whether the answer to request `index` waits for a request after it. */
  private keep(index: number): boolean {
    return this.proxy.hold && this.mine.length <= index + 1 && this.held(this.mine[index] ?? '')
  }

  /** The answers kept back that may go now: up to the first that still waits. */
  release(): void {
    while (this.kept.length > 0 && !this.keep((this.kept[0] as { index: number }).index)) {
      this.pass((this.kept.shift() as { bytes: Uint8Array[] }).bytes)
    }
  }

  private pass(bytes: Uint8Array[]): void {
    for (const b of bytes) this.write(this.client, b)
  }

  private write(socket: Socket<Link>, bytes: Uint8Array): void {
    const queue = this.outbox.get(socket)
    if (queue && queue.length > 0) {
      queue.push(bytes)
      return
    }
    const written = socket.write(bytes)
    if (written < bytes.length) this.outbox.set(socket, [bytes.subarray(Math.max(written, 0))])
  }

  flush(socket: Socket<Link>): void {
    const queue = this.outbox.get(socket) ?? []
    while (queue.length > 0) {
      const bytes = queue[0] as Uint8Array
      const written = socket.write(bytes)
      if (written < bytes.length) {
        queue[0] = bytes.subarray(Math.max(written, 0))
        return
      }
      queue.shift()
    }
  }

  end(): void {
    this.client.end()
    this.server?.end()
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice()
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength)

/** The NUL-terminated strings at the start of a message's body (as many as there are). */
function cStrings(body: Uint8Array): string[] {
  const out: string[] = []
  let start = 0
  for (let i = 0; i < body.length && out.length < 2; i++) {
    if (body[i] === 0) {
      out.push(new TextDecoder().decode(body.subarray(start, i)))
      start = i + 1
    }
  }
  return out
}
