import type { Serve, Server } from 'bun'
import type { Challenges } from './acme.ts'
import type { Certificate } from './certificate.ts'

type Options = Serve.Options<unknown>
type Fetch = (request: Request, server: Server<unknown>) => Response | Promise<Response>

/** How long a replaced listener answers with `Connection: close` before it stops accepting. */
export const DRAIN_MS = 10_000

/**
 * The HTTPS listener, whose certificate can change while it serves. Bun cannot swap a running
 * server's certificate (`reload({ tls })` is ignored), so a new certificate gets a new server
 * on the same port (both with SO_REUSEPORT). The old one drains: for `DRAIN_MS` every answer it
 * gives says `Connection: close`, so each keep-alive client ends its connection after a
 * complete answer and reconnects to the new one; then it stops accepting and finishes what it
 * still holds (`stop(false)`: a held long-poll or an upload runs to its end). Stopping it at
 * once would close keep-alive connections under requests already sent (wrk counted one read
 * error per connection per renewal; bench/tls.ts). Every server shares one fetch handler and
 * one context.
 */
export class SwappingServer {
  private live: Server<unknown>
  /** Servers of earlier certificates, finishing what they hold. */
  private readonly draining = new Set<Server<unknown>>()

  private readonly options: Options
  private readonly timers = new Set<ReturnType<typeof setTimeout>>()
  private readonly drained = new Set<Promise<void>>()

  constructor(
    options: Options,
    certificate: Certificate,
    private readonly onServer: (server: Server<unknown>) => void,
    private readonly drainMs = DRAIN_MS,
  ) {
    const fetch = (options as { fetch: Fetch }).fetch
    const closing = (response: Response) => {
      response.headers.set('connection', 'close')
      return response
    }
    // Only a draining server's answers are touched: one Set lookup per request otherwise.
    this.options = {
      ...options,
      fetch: (request: Request, server: Server<unknown>) => {
        const answer = fetch(request, server)
        if (!this.draining.has(server)) return answer
        return answer instanceof Response ? closing(answer) : answer.then(closing)
      },
    } as Options
    this.live = Bun.serve(this.withCertificate(certificate, options.port))
    onServer(this.live)
  }

  get server(): Server<unknown> {
    return this.live
  }

  /** Serves `certificate` to every new connection from now on. */
  swap(certificate: Certificate): void {
    const old = this.live
    this.live = Bun.serve(this.withCertificate(certificate, old.port))
    this.onServer(this.live)
    this.draining.add(old)
    const done: Promise<void> = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer)
        old.stop(false).then(resolve, resolve)
      }, this.drainMs)
      this.timers.add(timer)
    }).then(() => {
      this.draining.delete(old)
      this.drained.delete(done)
    })
    this.drained.add(done)
  }

  /** Resolves once every replaced listener has stopped (only the live one accepts). */
  async whenDrained(): Promise<void> {
    await Promise.all(this.drained)
  }

  /** Stops accepting; resolves when every server's requests have ended (`force`: cut them). */
  async stop(force = false): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    await Promise.all([this.live, ...this.draining].map((server) => server.stop(force)))
  }

  private withCertificate(certificate: Certificate, port: Options['port']): Options {
    return {
      ...this.options,
      port,
      reusePort: true,
      tls: { cert: certificate.cert, key: certificate.key },
    } as Options
  }
}

/**
 * The port-80 listener of `--domain`: the CA's HTTP-01 challenges are answered, and everything
 * else is redirected to the same path over HTTPS (308 keeps the method and body). Until the
 * first certificate is obtained there is nothing to redirect to: a 503 says so.
 */
export function challengeAndRedirect(options: {
  hostname: string
  port: number
  challenges: Challenges
  names: string[]
  httpsPort: () => number
  ready: () => boolean
  reusePort?: boolean
}): Server<unknown> {
  const prefix = '/.well-known/acme-challenge/'
  return Bun.serve({
    hostname: options.hostname,
    port: options.port,
    reusePort: options.reusePort === true,
    idleTimeout: 10,
    fetch(request) {
      const url = new URL(request.url)
      if (url.pathname.startsWith(prefix)) {
        const answer = options.challenges.get(url.pathname.slice(prefix.length))
        if (answer === undefined) return new Response('no such challenge\n', { status: 404 })
        return new Response(answer, { headers: { 'content-type': 'application/octet-stream' } })
      }
      if (!options.ready()) {
        return Response.json(
          { error: 'Hark is obtaining its HTTPS certificate; try again in a minute' },
          { status: 503, headers: { 'retry-after': '30' } },
        )
      }
      // Only to one of our own names: a Host header is the client's to choose.
      const host = options.names.includes(url.hostname.toLowerCase())
        ? url.hostname.toLowerCase()
        : (options.names[0] as string)
      const port = options.httpsPort()
      const target = `https://${host}${port === 443 ? '' : `:${port}`}${url.pathname}${url.search}`
      return new Response(null, { status: 308, headers: { location: target } })
    },
    error: () => new Response('error\n', { status: 500 }),
  })
}
