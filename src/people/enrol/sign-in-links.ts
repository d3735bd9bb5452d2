import { registrationOptions } from '../../access/passkeys/ceremony.ts'
import type { Ctx } from '../../core/context.ts'
import { fail } from '../../core/errors.ts'
import { hashToken, newId, newSecret } from '../../core/ids.ts'
import type { Provisioning } from '../service.ts'
import type { UserRow } from '../store.ts'
import { type NewPasskeyRequest, signInWithNewPasskey } from './passkeys/service.ts'

/**
 * Sign-in links: how a person made on the command line (`hark admin user add`, a server without
 * email) gets in at all, and how anyone who lost every passkey gets back in (`hark admin user
 * link`). The operator hands the person a one-time link; opening it enrols a passkey for that
 * account and starts a session. Like the setup link it is a capability: only its hash is kept,
 * it serves once, lives 24 hours, and a new link for the person voids the old one.
 */
export const SIGN_IN_LINK_TTL_MS = 24 * 3600 * 1000

const INVALID = 'this sign-in link is not valid (used, expired or replaced); ask for a new one'

/** Makes the person's sign-in link, replacing any earlier one. */
export async function issueSignInLink(
  p: Provisioning,
  user: UserRow,
  baseUrl: string,
): Promise<{ link: string; expires_at: number }> {
  const { secret, hash } = newSecret(32)
  const now = p.clock.now()
  const row = await p.writes.apply(async (tx) => {
    await tx.store.signInLinks.removeForUser(user.id)
    return await tx.store.signInLinks.insert({
      id: newId('sil'),
      hash,
      user_id: user.id,
      created_at: now,
      expires_at: now + SIGN_IN_LINK_TTL_MS,
    })
  })
  // The secret rides in the fragment: it never reaches a server or proxy log, nor a Referer.
  return { link: `${baseUrl.replace(/\/+$/, '')}/enrol#${secret}`, expires_at: row.expires_at }
}

/** The live link behind `code` and its person, or a 403 that says what to do. */
async function liveLink(ctx: Ctx, code: unknown) {
  if (typeof code !== 'string' || code === '') throw fail.invalid('code', 'is required')
  const link = await ctx.store.signInLinks.byHash(hashToken(code))
  const user = link && (await ctx.store.users.byId(link.user_id))
  if (!link || !user || link.used_at !== null || link.expires_at <= ctx.clock.now()) {
    throw fail.forbidden(INVALID)
  }
  return { link, user }
}

/** Starts enrolling a passkey with a link: the options name the account it is for. */
export async function signInLinkOptions(ctx: Ctx, code: unknown) {
  const { link, user } = await liveLink(ctx, code)
  const existing = await ctx.store.passkeys.byUser(user.id)
  return registrationOptions(ctx, 'link', user, existing, { link_id: link.id })
}

/**
 * Finishes it: the link is spent and the passkey stored in one transaction (two tabs racing
 * with one link enrol one passkey), then a session starts.
 */
export const signInWithLink = (ctx: Ctx, req: NewPasskeyRequest, userAgent: string | null) =>
  signInWithNewPasskey<{ link_id: string }>(
    ctx,
    req,
    userAgent,
    'link',
    async (data, keep) =>
      await ctx.writes.apply(async (tx) => {
        const now = ctx.clock.now()
        const link = await tx.store.signInLinks.byId(data.link_id)
        const owner = link && (await tx.store.users.byId(link.user_id))
        if (!link || !owner || !(await tx.store.signInLinks.use(link.id, now)))
          throw fail.forbidden(INVALID)
        await keep(owner)
        return owner
      }),
  )
