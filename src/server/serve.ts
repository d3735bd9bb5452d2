import type { Serve, Server } from 'bun'
import { clientIp } from '../core/client-address.ts'
import type { Config } from '../core/config.ts'
import type { Ctx } from '../core/context.ts'
import { errorResponse, FatalError } from '../core/errors.ts'
import { refuseOversizedBody } from '../core/http/body-limit.ts'
import { admitHost, pathOf } from '../core/http/front-door.ts'
import type { Logger, RequestEntry } from '../core/log.ts'
import { loopbackLink, terminalQr } from '../core/terminal-qr.ts'
import { issueSetupToken, setupTokenFile } from '../people/setup.ts'
import { buildApp, handlerOf } from './app.ts'
import { closeContext, createContext, openBlobs } from './context.ts'

export interface Running {
  ctx: Ctx
  /** The server answering new connections (with HTTPS, the one of the current certificate). */
  server: Server<unknown>
  url: string
  /** Stops accepting, answers every held long-poll, waits for in-flight requests, closes. */
  stop(): Promise<void>
  /** Resolves once the server serves its base URL (with --domain: once it has a certificate). */
  ready: Promise<void>
  /** SIGHUP: read the certificate files again, or renew if due. */
  reload?(): void
}

export class StartupError extends FatalError {}

/**
 * Bun's own cap on a body, far above ours: Bun answers a body over it with an empty 413 before
 * the handler runs, while `refuseOversizedBody` answers JSON (and uploads count as they stream).
 */
const BUN_BODY_CAP = Number.MAX_SAFE_INTEGER

/**
 * What every listener of the server is made with (plain HTTP, or HTTPS in src/server/tls): the one
 * request path and error answer. Bun's idle timeout stays short for ordinary requests;
 * long-polls extend their own (see `holdOpen` in core/longpoll.ts).
 */
export function serveOptions(ctx: Ctx, idleTimeout = 30): Serve.Options<unknown> {
  const handle = handlerOf(ctx, buildApp(ctx))
  const { config, log } = ctx
  return {
    hostname: config.host,
    port: config.port,
    idleTimeout,
    reusePort: config.reusePort === true,
    maxRequestBodySize: BUN_BODY_CAP,
    fetch: (request, srv) =>
      logged(ctx, request, clientIp(request, srv, config.trustProxy === true), () => {
        const admitted = admitHost(request)
        if (admitted instanceof Response) return admitted
        const refused = refuseOversizedBody(admitted, config.maxFileSize)
        if (refused) return refused
        if (admitted === request) return handle(admitted)
        // A stand-in request (a very short Host) matched the route: it is this request's.
        return handle(admitted).then((response) => {
          ctx.metrics.routes.set(request, ctx.metrics.routeOf(admitted))
          return response
        })
      }),
    error: (error) => {
      log.error(`unhandled: ${error.stack ?? error}`)
      return errorResponse(500, 'internal error')
    },
  } as Serve.Options<unknown>
}

/** Listens, or says in words why the address cannot be had. */
export function listenOn<T>(host: string, port: number | undefined, listen: () => T): T {
  try {
    return listen()
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EADDRINUSE') {
      throw new StartupError(
        `port ${port} on ${host} is already in use; stop the other server or pick another with --port / HARK_PORT`,
      )
    }
    if (code === 'EACCES') {
      throw new StartupError(
        `not allowed to listen on ${host}:${port}; use a port above 1023, or allow it (AmbientCapabilities=CAP_NET_BIND_SERVICE in the service unit)`,
      )
    }
    throw new StartupError(`cannot listen on ${host}:${port}: ${(error as Error).message}`)
  }
}

/**
 * Stops a running server: stop accepting, answer every held long-poll, give requests in
 * flight five seconds, cut the rest, close the context.
 */
export function stopper(
  ctx: Ctx,
  stopListening: (force: boolean) => Promise<void>,
): () => Promise<void> {
  let stopping: Promise<void> | undefined
  return () => {
    stopping ??= (async () => {
      const closed = stopListening(false)
      ctx.waiters.close()
      const graceful = await Promise.race([
        closed.then(() => true),
        Bun.sleep(5000).then(() => false),
      ])
      if (!graceful) await stopListening(true)
      await closeContext(ctx)
    })()
    return stopping
  }
}

/** Starts the HTTP server on an opened context. */
export async function startServer(
  ctx: Ctx,
  options: { idleTimeout?: number } = {},
): Promise<Running> {
  const { config } = ctx
  let server: Server<unknown>
  try {
    server = listenOn(config.host, config.port, () =>
      Bun.serve(serveOptions(ctx, options.idleTimeout)),
    )
  } catch (error) {
    await closeContext(ctx)
    throw error
  }
  ctx.server = server
  const stop = stopper(ctx, (force) => server.stop(force))
  return {
    ctx,
    server,
    url: server.url.href.replace(/\/$/, ''),
    stop,
    ready: Promise.resolve(),
  }
}

/**
 * One log line per request: client address, method, path (never the query: it may carry names),
 * route, status, time; and the request counted in the metrics. No async function here or in
 * `handle`: a held long-poll waits through both, and each async frame is memory that 10,000
 * held polls pay for (bench/longpolls.ts); a `then` costs less.
 */
function logged(
  ctx: Ctx,
  request: Request,
  ip: string | undefined,
  handle: () => Response | Promise<Response>,
): Response | Promise<Response> {
  const started = performance.now()
  const answered = handle()
  if (answered instanceof Response) return logAnswer(ctx, request, ip, started, answered)
  return answered.then((response) => logAnswer(ctx, request, ip, started, response))
}

function logAnswer(
  ctx: Ctx,
  request: Request,
  ip: string | undefined,
  started: number,
  response: Response,
): Response {
  const ms = performance.now() - started
  const route = ctx.metrics.routeOf(request)
  ctx.metrics.observe(request, response.status, ms / 1000)
  // A pairing's user code is a short-lived secret of its own: it stays out of the log.
  const path = pathOf(request.url).replace(/\/pairings\/[^/]+/, '/pairings/…')
  const entry: RequestEntry = {
    ip,
    method: request.method,
    path,
    route,
    status: response.status,
    ms,
  }
  if (ctx.log.request) ctx.log.request(entry)
  else ctx.log.info(`${ip ?? '-'} ${request.method} ${path} ${response.status} ${ms.toFixed(1)}ms`)
  return response
}

/** `hark serve`: open, listen, and shut down cleanly on SIGTERM or SIGINT. */
export async function serve(config: Config, log: Logger): Promise<void> {
  // Signal handlers go in before anything is opened: a SIGTERM that arrives while starting
  // must still shut down cleanly, not kill the process mid-write.
  let running: Running | undefined
  let stopRequested = false
  const stopped = new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      if (stopRequested) return
      log.info(`${signal}: shutting down`)
      stopRequested = true
      if (!running) return resolve()
      running.stop().then(resolve, (error) => {
        log.error(`shutdown: ${error}`)
        resolve()
      })
    }
    process.once('SIGTERM', () => onSignal('SIGTERM'))
    process.once('SIGINT', () => onSignal('SIGINT'))
    // SIGHUP reloads the certificate (--tls-cert files, or a --domain renewal) when there is
    // one, as nginx does. Otherwise, at a terminal, it keeps its old meaning (the terminal hung
    // up) and the server ends: one started in an SSH session must not outlive it, orphaned and
    // writing nowhere. Under a service manager (no terminal) `reload` is harmless.
    const atTerminal = Boolean(process.stdin.isTTY || process.stdout.isTTY)
    process.on('SIGHUP', () => {
      if (running?.reload) running.reload()
      else if (atTerminal) onSignal('SIGHUP')
      else log.info('SIGHUP: nothing to reload (no --tls-cert or --domain)')
    })
  })
  const mailer = config.smtpUrl
    ? (await import('../core/mailer.ts')).createSmtpMailer(
        config.smtpUrl,
        config.smtpFrom ?? 'hark@localhost',
      )
    : undefined
  // Files in S3: the bucket is proved reachable and writable before anything is opened, so a
  // wrong URL or a bucket that is down stops the start with its reason, never half-way.
  const blobs = config.s3Url ? openBlobs(config, '') : undefined
  if (blobs) {
    await blobs.check()
    log.info(`files are kept in ${blobs.where}`)
  }
  // Postgres when a database URL is set (docs/scaling.md), else the embedded SQLite file.
  const ctx = config.databaseUrl
    ? await (await import('./pg/context.ts')).createPgContext(config, { log, mailer, blobs })
    : await createContext(config, { log, mailer, blobs })
  // Orphans are gone before the first request (uploads would wait for them anyway).
  await ctx.filesSwept
  if (stopRequested) {
    await closeContext(ctx)
    return
  }
  // SMTP, Postgres and HTTPS (with its ACME client) load only when configured: each module a
  // start loads is run at start, and most servers use none of the three (bench/startup.ts).
  running =
    config.domains || config.tlsCert
      ? await (await import('./https.ts')).startHttps(ctx)
      : await startServer(ctx)
  // With --domain the HTTPS listener waits for its first certificate.
  await Promise.race([running.ready, stopped])
  if (stopRequested) {
    await stopped
    log.info('stopped')
    return
  }
  // The default base URL follows the port; with --port 0 that is only known now.
  if (config.port === 0 && config.baseUrl === 'http://localhost:0') {
    config.baseUrl = `http://localhost:${running.server.port}`
  }
  log.info(`hark listening on ${running.url} (base URL ${config.baseUrl}, data ${config.dataDir})`)
  // First run: only whoever holds this link (printed here, and in a 0600 file) can set up.
  const setup = await issueSetupToken(ctx)
  if (setup) {
    const file = setupTokenFile(ctx)
    // The link is the owner's capability for an hour. A person at a terminal is shown it; a log
    // that outlives the terminal (the system journal, a file) must not keep it.
    if (process.stderr.isTTY) {
      log.info(`setup needed: open ${setup} within an hour (also in ${file})`)
      // Scanned, the owner makes their passkey on the phone itself (a line of a JSON log is no
      // place for a picture). A localhost link would lead the phone nowhere: say what would.
      if (loopbackLink(setup)) {
        log.info(
          'to set up from a phone, give Hark an address it can reach over HTTPS: --domain NAME, or --base-url behind a proxy or tunnel (README)',
        )
      } else if (!log.request) process.stderr.write(`${terminalQr(setup)}\n`)
    } else log.info(`setup needed: the one-time setup link is in ${file} (valid for an hour)`)
    log.info('or, headless: hark admin user add EMAIL --owner')
  }
  await stopped
  log.info('stopped')
}
