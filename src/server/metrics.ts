import { statSync } from 'node:fs'
import { Elysia, t } from 'elysia'
import { clientIp } from '../core/client-address.ts'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { fail } from '../core/errors.ts'
import { socketRequest } from '../core/http/front-door.ts'
import { sameHash } from '../core/ids.ts'
import { Counter, Gauge, Histogram, type Labels, Registry } from '../core/metrics.ts'
import { databasePath } from '../db/database.ts'

/**
 * What `/metrics` shows (with `--metrics`): requests by route and status, their latency, held
 * long-polls, writes and flushes, push deliveries by outcome, the database's size, the process.
 * Requests are counted as they are answered; everything else is read when scraped.
 */
export class ServerMetrics {
  /** The route each request matched (Elysia's pattern, e.g. `/v1/asks/:id`): bounded labels. */
  readonly routes = new WeakMap<Request, string>()
  private readonly registry = new Registry()
  private readonly requests = this.registry.add(
    new Counter('hark_http_requests_total', 'HTTP requests answered, by route, method and status'),
  )
  private readonly latency = this.registry.add(
    new Histogram(
      'hark_http_request_duration_seconds',
      'Time to answer, by route (long-polls count their wait)',
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    ),
  )
  private readonly started = Date.now() / 1000

  /** The route of a request (or where none matched: `unmatched`). */
  routeOf(request: Request): string {
    return this.routes.get(request) ?? 'unmatched'
  }

  /**
   * One labels object per route, method and status, reused: the series' key is worked out once
   * for it, not on every request (`Series.slot`).
   */
  private readonly labelsOf = new Map<string, { request: Labels; route: Labels }>()

  observe(request: Request, status: number, seconds: number): void {
    const route = this.routeOf(request)
    const method = request.method
    const id = `${route} ${method} ${status}`
    let labels = this.labelsOf.get(id)
    if (!labels) {
      labels = { request: { route, method, status: String(status) }, route: { route } }
      this.labelsOf.set(id, labels)
    }
    this.requests.inc(labels.request)
    this.latency.observe(labels.route, seconds)
  }

  /** The exposition: counted families, then what is read now. */
  render(ctx: Ctx): string {
    const writes = ctx.writes.stats()
    const now = new Registry()
    now.add(new Gauge('hark_longpolls_held', 'Long-polls held open now', () => ctx.waiters.size))
    now.add(new Gauge('hark_writes_total', 'Writes committed', () => writes.writes, 'counter'))
    now.add(
      new Gauge(
        'hark_write_flushes_total',
        'Syncs of the write-ahead log by the write path (group commit: many writes each)',
        () => writes.flushes,
        'counter',
      ),
    )
    now.add(
      new Gauge(
        'hark_push_deliveries_total',
        'Web push sends finished, by outcome (sent; retry, resign, gone, refused, bad_keys, drop, stale)',
        () => [...ctx.push.outcomes].map(([outcome, n]) => [{ outcome }, n]),
        'counter',
      ),
    )
    // The data directory's SQLite file, unless the records are in a shared database.
    if (!ctx.database.shared) {
      now.add(
        new Gauge('hark_database_bytes', 'Database and write-ahead log on disk', () =>
          dbBytes(ctx),
        ),
      )
    }
    const tlsNotAfter = ctx.tlsNotAfter
    if (tlsNotAfter) {
      now.add(
        new Gauge(
          'hark_tls_certificate_not_after_seconds',
          'When the HTTPS certificate served now ends (Unix time; --domain renews 30 days before)',
          () => (tlsNotAfter() ?? 0) / 1000,
        ),
      )
    }
    const wakes = ctx.database.wakeStats?.()
    if (wakes) {
      now.add(
        new Gauge(
          'hark_wake_notifications_total',
          'Wake-up notifications through Postgres, by direction (sent, received from other instances, own come back)',
          () => [
            [{ direction: 'sent' }, wakes.sent],
            [{ direction: 'received' }, wakes.received],
            [{ direction: 'own' }, wakes.own],
          ],
          'counter',
        ),
      )
      now.add(
        new Gauge(
          'hark_wake_all_total',
          'Times every held long-poll re-read because wake-ups may have been missed (listener reconnects, failed self-checks)',
          () => wakes.wakeAlls,
          'counter',
        ),
      )
    }
    now.add(
      new Gauge(
        'process_resident_memory_bytes',
        'Resident memory',
        () => process.memoryUsage().rss,
      ),
    )
    now.add(
      new Gauge(
        'process_cpu_seconds_total',
        'User and system CPU time',
        () => {
          const { user, system } = process.cpuUsage()
          return (user + system) / 1e6
        },
        'counter',
      ),
    )
    now.add(new Gauge('process_start_time_seconds', 'Start time, Unix seconds', () => this.started))
    return this.registry.render() + now.render()
  }
}

function dbBytes(ctx: Ctx): number {
  const path = databasePath(ctx.config.dataDir)
  const size = (p: string) => {
    try {
      return statSync(p).size
    } catch {
      return 0
    }
  }
  return size(path) + size(`${path}-wal`)
}

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1'])

/**
 * The client is on this machine and talks to Hark directly (no socket at all: a test driving the
 * app in process). A request a reverse proxy passed on comes from loopback too, so any sign of a
 * proxy hop counts as the world: behind nginx or Caddy, scraping needs the token.
 */
function fromThisMachine(ctx: Ctx, request: Request): boolean {
  if (request.headers.has('x-forwarded-for') || request.headers.has('forwarded')) return false
  const ip = clientIp(socketRequest(request), ctx.server, false)
  return ip === undefined || LOOPBACK.has(ip)
}

/**
 * `GET /metrics`, only with `--metrics`. With `--metrics-token`, a scraper sends it as a bearer
 * token; without one, only a client on this machine may read (a Prometheus on the same host, or
 * through an SSH tunnel): route names, counts and sizes are nobody else's business.
 */
export const metricsRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/metrics' }).get(
    '/metrics',
    ({ request }) => {
      const token = ctx.config.metricsToken
      if (token) {
        const given = /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1]
        const encode = (s: string) => new TextEncoder().encode(s)
        if (!given || !sameHash(encode(given), encode(token))) throw fail.unauthorized()
      } else if (!fromThisMachine(ctx, request)) {
        throw fail.forbidden('metrics are read from this machine, or with --metrics-token')
      }
      return new Response(ctx.metrics.render(ctx), {
        headers: { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' },
      })
    },
    {
      detail: doc(
        'getMetrics',
        'public',
        'Prometheus metrics (only with --metrics; a bearer --metrics-token, or from this machine)',
        t.String(),
        { public: true },
      ),
    },
  )

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../core/context.ts' {
  interface Ctx {
    /** Requests counted for `/metrics`, and the route each matched (for the log too). */
    metrics: ServerMetrics
  }
}
