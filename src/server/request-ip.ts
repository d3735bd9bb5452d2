import { clientIp } from './client-ip.ts'
import type { Ctx } from './context.ts'

/**
 * The address a request came from, for per-IP limits: the socket's peer, or behind a trusted
 * proxy the address it forwarded. Without a listening server (tests driving `app.handle()`),
 * every request shares one bucket.
 */
export const requestIp = (ctx: Ctx, request: Request): string =>
  clientIp(request, ctx.server, ctx.config.trustProxy === true) ?? 'local'
