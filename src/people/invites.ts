import { type PersonAuth, requireSession } from '../access/person.ts'
import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { newId, newSecret } from '../core/ids.ts'
import { cleanEmail } from './enrol/admission.ts'
import { registrationMode } from './settings.ts'
import type { InviteRow } from './store.ts'

const DEFAULT_TTL_S = 7 * 24 * 3600
const MAX_TTL_S = 30 * 24 * 3600

/**
 * Invites: single-use links that let one person sign up. The owner can always invite (that is
 * how a closed server grows); in `invite` mode everyone can.
 */
async function mayInvite(ctx: Ctx, person: PersonAuth): Promise<void> {
  if (person.user.is_owner) return
  if ((await registrationMode(ctx)) !== 'invite')
    throw fail.forbidden('only the owner can invite people')
}

export const inviteView = (row: InviteRow) => ({
  id: row.id,
  email: row.email,
  created_at: row.created_at,
  expires_at: row.expires_at,
  used_at: row.used_at,
})

export async function createInvite(
  ctx: Ctx,
  person: PersonAuth,
  input: { email?: unknown; expires_in?: unknown },
) {
  // An invite makes an account with a passkey of its own, which would outlive a leaked token.
  requireSession(person, 'inviting someone')
  await mayInvite(ctx, person)
  const email = input.email === undefined ? null : cleanEmail(input.email)
  const ttl = input.expires_in ?? DEFAULT_TTL_S
  if (typeof ttl !== 'number' || !(ttl > 0) || ttl > MAX_TTL_S) {
    throw fail.invalid('expires_in', `must be seconds, more than 0 and at most ${MAX_TTL_S}`)
  }
  const { secret, hash } = newSecret(32)
  const now = ctx.clock.now()
  const expires_at = now + Math.round(ttl * 1000)
  const invite = {
    id: newId('inv'),
    hash,
    created_by: person.user.id,
    email,
    created_at: now,
    expires_at,
  }
  const row = await ctx.writes.apply(async (tx) => await tx.store.invites.insert(invite))
  return {
    invite: { ...inviteView(row), link: `${ctx.config.baseUrl}/invite#${secret}`, code: secret },
  }
}

/** Open invites: all of them for the owner, one's own for everyone else. */
export async function listInvites(ctx: Ctx, person: PersonAuth) {
  const open = await ctx.store.invites.open(ctx.clock.now())
  return open.filter((i) => person.user.is_owner || i.created_by === person.user.id).map(inviteView)
}

export async function revokeInvite(ctx: Ctx, person: PersonAuth, id: string): Promise<void> {
  const row = await ctx.store.invites.byId(id)
  if (!row || (!person.user.is_owner && row.created_by !== person.user.id)) {
    throw fail.notFound('invite')
  }
  await ctx.writes.apply(async (tx) => await tx.store.invites.remove(id))
}
