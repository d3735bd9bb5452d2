import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server'
import {
  authenticationOptions,
  type NewCredential,
  registrationOptions,
  takeChallenge,
  verifyAssertion,
  verifyNewCredential,
} from '../../../access/passkeys/ceremony.ts'
import { approverKey } from '../../../access/passkeys/keys.ts'
import type { Passkey } from '../../../access/passkeys/schema.ts'
import type { ChallengePurpose, PasskeyRow } from '../../../access/passkeys/store.ts'
import { startSession } from '../../../access/sessions/service.ts'
import type { Ctx } from '../../../core/context.ts'
import { fail } from '../../../core/errors.ts'
import { cleanLabel } from '../../../core/labels.ts'
import { fingerprint } from '../../../shared/fingerprint.ts'
import type { UserRow } from '../../store.ts'
import { type Admission, admit, cleanEmail, createAdmittedPerson } from '../admission.ts'

/**
 * Passkeys: signing up with one (first-run setup, invites, open mode), logging in with one,
 * and the person managing theirs. Admission rules live in `people/enrol/admission.ts`.
 */

const DEFAULT_NAME = 'Passkey'

/** What a sign-up ceremony remembers between its options and its verification. */
interface SignUp extends Admission {
  email: string
  name: string | null
}

/**
 * A passkey as the person's app sees it. Its fingerprint is made by the function `hark keys`
 * and `hark init` print with (shared/fingerprint.ts), so the two read the same by construction.
 */
export const passkeyOf = (row: PasskeyRow): Passkey => {
  const key = approverKey(row)
  return {
    id: row.id,
    name: row.name,
    created_at: row.created_at,
    last_used_at: row.last_used_at,
    device_type: row.device_type,
    backed_up: row.backed_up === 1,
    fingerprint: key ? fingerprint(key) : null,
  }
}

export const passkeyName = (raw: string | undefined) =>
  raw === undefined ? DEFAULT_NAME : cleanLabel(raw, 'name')

export async function storePasskey(
  ctx: Ctx,
  user: UserRow,
  credential: NewCredential,
  name: string,
) {
  if (await ctx.store.passkeys.byId(credential.id))
    throw fail.conflict('this passkey is already registered')
  return await ctx.store.passkeys.insert({
    id: credential.id,
    user_id: user.id,
    public_key: credential.publicKey,
    counter: credential.counter,
    transports: credential.transports ? JSON.stringify(credential.transports) : null,
    device_type: credential.deviceType,
    backed_up: credential.backedUp ? 1 : 0,
    name,
    created_at: ctx.clock.now(),
  })
}

/**
 * Starts a sign-up. Admission is checked first, so a stranger on a fresh server (no setup
 * token) or on a closed one is refused before any ceremony starts.
 */
export async function signUpOptions(
  ctx: Ctx,
  req: { email: string; name?: string; setup_token?: string; invite?: string },
) {
  const email = cleanEmail(req.email)
  const admission: Admission = { setup_token: req.setup_token, invite: req.invite }
  await admit(ctx, admission, email)
  const signUp: SignUp = { email, name: req.name?.trim() || null, ...admission }
  return registrationOptions(ctx, 'register', signUp, [], signUp)
}

/** What finishing a ceremony that creates a passkey sends. */
export interface NewPasskeyRequest {
  challenge_id: string
  response: RegistrationResponseJSON
  name?: string
}

/**
 * Finishes a ceremony that creates a passkey and signs in with it (sign-up, sign-in link): the
 * name is checked and the challenge spent before the response is verified; then `person` finds
 * or makes the person from what the challenge remembered, calling `keep` in the same
 * transaction to store the passkey, and a session starts.
 */
export async function signInWithNewPasskey<D>(
  ctx: Ctx,
  req: NewPasskeyRequest,
  userAgent: string | null,
  purpose: ChallengePurpose,
  person: (data: D, keep: (user: UserRow) => Promise<void>) => Promise<UserRow>,
): Promise<{ user: UserRow; setCookie: string }> {
  const name = passkeyName(req.name)
  const { challenge, data } = await takeChallenge<D>(ctx, req.challenge_id, purpose)
  const credential = await verifyNewCredential(ctx, challenge, req.response)
  const user = await person(data, async (owner) => {
    await storePasskey(ctx, owner, credential, name)
  })
  return { user, setCookie: (await startSession(ctx, user, userAgent)).setCookie }
}

/**
 * Completes a sign-up: the account and its passkey are created in one transaction that
 * re-checks admission, so two parallel setups give one owner and an invite serves once.
 */
export const signUp = (ctx: Ctx, req: NewPasskeyRequest, userAgent: string | null) =>
  signInWithNewPasskey<SignUp>(ctx, req, userAgent, 'register', async (data, keep) => {
    const admission: Admission = { setup_token: data.setup_token, invite: data.invite }
    // A passkey proves nothing about the address: verified only when an invite was bound to it.
    return (
      await createAdmittedPerson(
        ctx,
        admission,
        { email: data.email, name: data.name, emailProven: false },
        keep,
      )
    ).user
  })

export const loginOptions = (ctx: Ctx) => authenticationOptions(ctx)

/** Logs in with a discoverable passkey: the credential names the person, no email needed. */
export async function logIn(
  ctx: Ctx,
  req: { challenge_id: string; response: AuthenticationResponseJSON },
  userAgent: string | null,
): Promise<{ user: UserRow; setCookie: string }> {
  const { challenge } = await takeChallenge<null>(ctx, req.challenge_id, 'login')
  const passkey = await ctx.store.passkeys.byId(req.response.id)
  if (!passkey) throw fail.unauthorized('passkey login failed: this passkey is not registered here')
  const use = await verifyAssertion(ctx, challenge, req.response, passkey)
  // Conditional on the counter still being below the new one, so two racing logins that
  // carry the same counter cannot both pass.
  const recorded = await ctx.writes.apply(
    async (tx) =>
      await tx.store.passkeys.recordUse(
        passkey.id,
        use.counter,
        use.deviceType,
        use.backedUp,
        ctx.clock.now(),
      ),
  )
  if (!recorded) throw fail.unauthorized('passkey login failed: the signature counter went back')
  const user = await ctx.store.users.byId(passkey.user_id)
  if (!user) throw fail.unauthorized('passkey login failed: this passkey is not registered here')
  return { user, setCookie: (await startSession(ctx, user, userAgent)).setCookie }
}

/** Options to add another passkey; the person's existing ones are excluded. */
export async function addPasskeyOptions(ctx: Ctx, user: UserRow) {
  const existing = await ctx.store.passkeys.byUser(user.id)
  return registrationOptions(ctx, 'add', user, existing, { user_id: user.id })
}

export async function addPasskey(
  ctx: Ctx,
  user: UserRow,
  req: { challenge_id: string; response: RegistrationResponseJSON; name?: string },
): Promise<Passkey> {
  const name = passkeyName(req.name)
  const { challenge, data } = await takeChallenge<{ user_id: string }>(ctx, req.challenge_id, 'add')
  // Options fetched by one person cannot be completed by another.
  if (data.user_id !== user.id) {
    throw fail.invalid('challenge_id', 'is unknown, used or expired; ask for new options')
  }
  const credential = await verifyNewCredential(ctx, challenge, req.response)
  return passkeyOf(
    await ctx.writes.apply(async () => await storePasskey(ctx, user, credential, name)),
  )
}

export const listPasskeys = async (ctx: Ctx, userId: string): Promise<Passkey[]> =>
  (await ctx.store.passkeys.byUser(userId)).map(passkeyOf)

/** Another person's passkey is "not found", like an unknown id. */
export async function renamePasskey(
  ctx: Ctx,
  userId: string,
  id: string,
  name: string,
): Promise<Passkey> {
  const label = cleanLabel(name, 'name')
  const row = await ctx.writes.apply(
    async (tx) => await tx.store.passkeys.rename(id, userId, label),
  )
  if (!row) throw fail.notFound('passkey')
  return passkeyOf(row)
}

/**
 * Removes a passkey, unless it is the person's last way in: without email login (no SMTP),
 * a person with no passkey could never log in again. Person tokens do not count: they are
 * for scripts, not a way into the app.
 */
export async function removePasskey(ctx: Ctx, userId: string, id: string): Promise<void> {
  await ctx.writes.apply(async (tx) => {
    const row = await tx.store.passkeys.byId(id)
    if (!row || row.user_id !== userId) throw fail.notFound('passkey')
    if (!ctx.mailer && (await tx.store.passkeys.countByUser(userId)) <= 1) {
      throw fail.conflict(
        'this is your last passkey and email login is not set up: add another passkey first',
      )
    }
    await tx.store.passkeys.remove(id, userId)
  })
}
