import type { Serve, Server } from 'bun'
import { clientIp } from '../core/client-address.ts'
import type { Ctx } from '../core/context.ts'
import { errorResponse, FatalError } from '../core/errors.ts'
import { refuseOversizedBody } from '../core/http/body-limit.ts'
import { admitHost, pathOf } from '../core/http/front-door.ts'
import type { RequestEntry } from '../core/log.ts'
import { buildApp, handlerOf } from './app.ts'
import { closeContext } from './context.ts'

/**
 * What every listener of the server shares, plain HTTP (serve.ts) or HTTPS (https.ts): the
 * options of the one request path, listening with errors in words, the logged answer, stopping.
 */
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
