import type { Ctx } from '../core/context.ts'
import { renderError } from './render-error.ts'

/**
 * Holds an answer until everything written so far is durable (core/write-path.ts): a write
 * is acknowledged only once it is on disk, and a read never shows what a crash could still
 * take back. Costs nothing when no write is under way; a flush that fails answers 503.
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
