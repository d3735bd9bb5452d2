import type { Ctx } from '../../core/context.ts'
import { fail } from '../../core/errors.ts'
import { hashToken, newId } from '../../core/ids.ts'
import { registrationMode } from '../settings.ts'
import { checkSetupToken, finishSetup, SETUP_KEY } from '../setup.ts'
import type { InviteRow, UserRow } from '../store.ts'

/** What a sign-up presents to be let in: the setup token (first run) or an invite. */
export interface Admission {
  setup_token?: string
  invite?: string
}

export type Admitted = { kind: 'owner' } | { kind: 'invite'; invite: InviteRow } | { kind: 'open' }

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export function cleanEmail(raw: unknown, field = 'email'): string {
  if (typeof raw !== 'string') throw fail.invalid(field, 'is required')
  const email = raw.trim()
  if (!EMAIL.test(email) || email.length > 254) throw fail.invalid(field, 'is not an email address')
  return email
}

async function liveInvite(ctx: Ctx, secret: string, email: string): Promise<InviteRow> {
  const invite = await ctx.store.invites.byHash(hashToken(secret))
  if (!invite || invite.used_at !== null || invite.expires_at <= ctx.clock.now()) {
    throw fail.forbidden('this invite is not valid (used, expired or revoked)')
  }
  if (invite.email !== null && invite.email.toLowerCase() !== email.toLowerCase()) {
    throw fail.forbidden('this invite is for another email address')
  }
  return invite
}

/**
 * Decides whether someone may create an account for `email`: with the setup token while the
 * server has no owner (they become the owner), else with a live invite, else only in open mode.
 * Called when a sign-up starts and again, atomically, when it completes.
 */
export async function admit(ctx: Ctx, admission: Admission, email: string): Promise<Admitted> {
  if (!(await ctx.store.users.hasOwner())) {
    await checkSetupToken(ctx, admission.setup_token)
    return { kind: 'owner' }
  }
  if (admission.setup_token !== undefined) throw fail.conflict('setup is already done')
  if (await ctx.store.users.byEmail(email))
    throw fail.conflict(`${email} already has an account; log in`)
  if (admission.invite !== undefined)
    return { kind: 'invite', invite: await liveInvite(ctx, admission.invite, email) }
  if ((await registrationMode(ctx)) === 'open') return { kind: 'open' }
  throw fail.forbidden('registration is closed; ask the owner for an invite')
}

/**
 * Whether the new account's address counts as proven: the sign-up proved it (an email code), the
 * operator vouched for it (the setup token makes the owner), or the invite was bound to it.
 * Otherwise (a passkey sign-up in open mode or with an unbound invite) nobody has shown that the
 * address is theirs; see `email/service.ts` for what its first email-code login does.
 */
const emailVerified = (admitted: Admitted, emailProven: boolean | undefined) =>
  emailProven === true ||
  admitted.kind === 'owner' ||
  (admitted.kind === 'invite' && admitted.invite.email !== null)

/**
 * Creates the admitted person in one immediate transaction, re-checking admission inside it:
 * two parallel setups give exactly one owner, and an invite is used exactly once.
 * `then` runs inside the same transaction (to store the new passkey, say). `emailProven` says
 * whether the sign-up itself proved control of the address (an email code did; a passkey, or
 * leaving it out, did not).
 */
export async function createAdmittedPerson<T>(
  ctx: Ctx,
  admission: Admission,
  input: { email: string; name?: string | null; emailProven?: boolean },
  then: (user: UserRow) => Promise<T>,
): Promise<{ user: UserRow; result: T }> {
  const email = cleanEmail(input.email)
  const created = await ctx.writes.apply(async (tx) => {
    const admitted = await admit(ctx, admission, email)
    const now = ctx.clock.now()
    const user = await tx.store.users.insert({
      id: newId('usr'),
      email,
      name: input.name?.trim() || null,
      is_owner: admitted.kind === 'owner',
      created_at: now,
      email_verified: emailVerified(admitted, input.emailProven),
    })
    if (
      admitted.kind === 'invite' &&
      !(await tx.store.invites.use(admitted.invite.id, now, user.id))
    ) {
      throw fail.forbidden('this invite is not valid (used, expired or revoked)')
    }
    if (admitted.kind === 'owner') await tx.store.settings.remove(SETUP_KEY)
    return { user, result: await then(user) }
  })
  // The token file goes only once the owner is committed.
  if (created.user.is_owner) await finishSetup(ctx)
  return created
}
