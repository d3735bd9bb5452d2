import type { Ctx } from '../core/context.ts'
import { pathOf } from '../core/http/front-door.ts'
import { renderError } from './render-error.ts'

/**
 * Holds an answer until everything written so far is durable (core/write-path.ts): a write
 * is acknowledged only once it is on disk, and a read never shows what a crash could still
 * take back. Costs nothing when no write is under way; a flush that fails answers 503. An
 * answer that shows nothing stored does not wait (`showsNothingStored`).
 */
export function whenDurable(
  ctx: Ctx,
  request: Request,
  response: Response,
): Response | Promise<Response> {
  const settled = ctx.writes.settled()
  if (!settled) return response
  return settled.then(
    () => response,
    async (error) => await renderError(ctx, request, error),
  )
}

/**
 * Whether an answer shows nothing the database holds, so it need not wait for a flush:
 * `/health` and the web app's files (GETs outside `/v1/`, but `/metrics`). On a disk that takes
 * seconds to sync (an SD card), a health probe or the app's shell would otherwise wait for an
 * agent's send to reach the disk.
 */
export function showsNothingStored(request: Request): boolean {
  if (request.method !== 'GET' && request.method !== 'HEAD') return false
  const path = pathOf(request.url)
  return !path.startsWith('/v1/') && path !== '/metrics'
}
