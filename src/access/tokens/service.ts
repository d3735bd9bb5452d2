import { fail } from '../../core/errors.ts'
import type { PersonAuth, TokenInfo } from '../../people/service.ts'
import { cleanLabel, issueToken, tokenInfo } from '../../people/service.ts'
import type { Ctx } from '../../server/context.ts'
import { requireSession } from '../guards.ts'

/**
 * The person's tokens: their person tokens (for scripts) and the agent tokens of their
 * channels. Shown once when made; afterwards only their label and use times.
 */
export const listTokens = (ctx: Ctx, person: PersonAuth): TokenInfo[] =>
  ctx.store.tokens.liveByUser(person.user.id).map(tokenInfo)

function ownLiveToken(ctx: Ctx, person: PersonAuth, id: string) {
  const row = ctx.store.tokens.byId(id)
  if (!row || row.user_id !== person.user.id || row.revoked_at !== null)
    throw fail.notFound('token')
  return row
}

/** Making and rotating need a browser session: a token may not mint its own successors. */
export function createPersonToken(ctx: Ctx, person: PersonAuth, label: unknown) {
  requireSession(person, 'making a token')
  const { token, row } = issueToken(ctx, 'person', person.user, null, cleanLabel(label ?? 'Script'))
  return { token, info: tokenInfo(row) }
}

/** Revoking takes effect at once: the next request with it gets 401. */
export function revokeToken(ctx: Ctx, person: PersonAuth, id: string): void {
  ownLiveToken(ctx, person, id)
  ctx.store.tokens.revoke(id, ctx.clock.now())
}

/** A new secret for the same purpose (kind, channel, label); the old one stops working. */
export function rotateToken(ctx: Ctx, person: PersonAuth, id: string) {
  requireSession(person, 'rotating a token')
  return ctx.db
    .transaction(() => {
      const old = ownLiveToken(ctx, person, id)
      ctx.store.tokens.revoke(id, ctx.clock.now())
      const channel = old.channel_id ? (ctx.store.channels.byId(old.channel_id) ?? null) : null
      const { token, row } = issueToken(ctx, old.kind, person.user, channel, old.label)
      return { token, info: tokenInfo(row) }
    })
    .immediate()
}
