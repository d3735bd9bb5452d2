import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server'
import type { Ctx } from '../../core/context.ts'
import { fail, HarkError } from '../../core/errors.ts'
import { newId } from '../../core/ids.ts'
import type { ChallengePurpose, PasskeyRow } from './store.ts'

/**
 * The WebAuthn relying party: options out, responses in, challenges kept server-side.
 * The services above decide who may do what; this file only knows the protocol.
 */

export const CHALLENGE_TTL_MS = 5 * 60_000

/**
 * Sign-up and login ceremonies are started by people not logged in yet, so by anyone. Each start
 * stores a challenge row for up to five minutes. The rows stay bounded: expired ones are swept by
 * every start, a client address starts at most `startsPerIp` per five minutes (routes.ts), and
 * past `pendingAnonymous` waiting challenges the server refuses new ones (503) instead of growing.
 * A person starts one per login, a few if they cancel the prompt and try again; a small server
 * has a handful in flight. Filling the cap takes ~34 addresses each at its own limit.
 */
export const PASSKEY_LIMITS = {
  startsPerIp: 30,
  windowMs: CHALLENGE_TTL_MS,
  pendingAnonymous: 1000,
} as const

/** ES256, EdDSA, RS256: what platform authenticators and security keys use. */
const ALGORITHMS = [-7, -8, -257]

/**
 * The relying party comes from the configured base URL only. Host and X-Forwarded-* are
 * the client's to choose, and a passkey bound to a forged name would be a phishing aid.
 */
export function relyingParty(ctx: Ctx): { rpID: string; origin: string } {
  const url = new URL(ctx.config.baseUrl)
  return { rpID: url.hostname, origin: url.origin }
}

export interface CeremonyOptions<O> {
  challenge_id: string
  options: O
}

async function saveChallenge(
  ctx: Ctx,
  purpose: ChallengePurpose,
  challenge: string,
  data: unknown,
): Promise<string> {
  const id = newId('chal')
  await ctx.writes.apply(async (tx) => {
    const now = ctx.clock.now()
    // Abandoned ceremonies leave rows behind; each new one sweeps them, so the table stays small.
    await tx.store.challenges.removeExpired(now)
    // Only ceremonies anyone may start count against the cap: 'add' needs a session, 'link' a link.
    if (purpose === 'register' || purpose === 'login') await refuseWhenFull(ctx, now)
    await tx.store.challenges.insert({
      id,
      purpose,
      challenge,
      // Sealed (access/keys/keyring.ts): the setup token or an invite's secret is never stored in
      // the clear and no backup (which has no keys) opens it; any instance on the database does.
      data: (await ctx.keys.current()).seal('ceremony', `${id} ${purpose}`, data ?? null),
      expires_at: now + CHALLENGE_TTL_MS,
    })
  })
  return id
}

/** 503 with Retry-After (when the first waiting one expires) once the anonymous cap is reached. */
async function refuseWhenFull(ctx: Ctx, now: number): Promise<void> {
  const pending = await ctx.store.challenges.pendingAnonymous(now)
  if (pending.count < PASSKEY_LIMITS.pendingAnonymous) return
  const seconds = Math.max(1, Math.ceil(((pending.firstExpiry ?? now) - now) / 1000))
  throw new HarkError(
    503,
    `too many passkey logins and sign-ups are waiting to finish on this server; retry in ${seconds} s`,
    undefined,
    { 'Retry-After': String(seconds) },
  )
}

/**
 * Consumes the challenge: it is deleted before anything is checked, so a response is tried
 * at most once, whether it verifies or not.
 */
export async function takeChallenge<D>(
  ctx: Ctx,
  id: string,
  purpose: ChallengePurpose,
): Promise<{ challenge: string; data: D }> {
  const row = await ctx.writes.apply(async (tx) => await tx.store.challenges.take(id))
  const live = row && row.purpose === purpose && row.expires_at > ctx.clock.now()
  // Tampered with, or sealed under keys since retired or not restored from a backup: as good as
  // expired.
  const data =
    live && row.data !== null
      ? await ctx.keys.open<D>('ceremony', `${id} ${purpose}`, row.data)
      : undefined
  if (!live || data === undefined) {
    throw fail.invalid('challenge_id', 'is unknown, used or expired; ask for new options')
  }
  return { challenge: row.challenge, data }
}

export async function registrationOptions(
  ctx: Ctx,
  purpose: 'register' | 'add' | 'link',
  user: { email: string; name?: string | null },
  exclude: PasskeyRow[],
  data: unknown,
): Promise<CeremonyOptions<PublicKeyCredentialCreationOptionsJSON>> {
  const { rpID } = relyingParty(ctx)
  const options = await generateRegistrationOptions({
    rpName: 'Hark',
    rpID,
    userName: user.email,
    userDisplayName: user.name ?? user.email,
    // The user handle is random: login finds the person by credential id, and the handle
    // must not carry the email (the spec forbids personal data in it).
    attestationType: 'none',
    excludeCredentials: exclude.map((p) => ({ id: p.id, transports: transportsOf(p) })),
    // Discoverable credentials: login needs no email. UV: the passkey is the whole login.
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    supportedAlgorithmIDs: ALGORITHMS,
    timeout: CHALLENGE_TTL_MS,
  })
  return { challenge_id: await saveChallenge(ctx, purpose, options.challenge, data), options }
}

export async function authenticationOptions(
  ctx: Ctx,
): Promise<CeremonyOptions<PublicKeyCredentialRequestOptionsJSON>> {
  const { rpID } = relyingParty(ctx)
  const options = await generateAuthenticationOptions({
    rpID,
    userVerification: 'required',
    timeout: CHALLENGE_TTL_MS,
  })
  return { challenge_id: await saveChallenge(ctx, 'login', options.challenge, null), options }
}

/** A verified new credential, ready to store. */
export interface NewCredential {
  id: string
  publicKey: Uint8Array
  counter: number
  transports: string[] | undefined
  deviceType: string
  backedUp: boolean
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * What every verification expects alike: the challenge we issued, our origin and rpID, and the
 * response as sent (some authenticators leave out the extension results).
 */
function expectations<R extends RegistrationResponseJSON | AuthenticationResponseJSON>(
  ctx: Ctx,
  challenge: string,
  response: R,
) {
  const { rpID, origin } = relyingParty(ctx)
  return {
    response: { ...response, clientExtensionResults: response.clientExtensionResults ?? {} },
    expectedChallenge: challenge,
    expectedOrigin: origin,
    expectedRPID: rpID,
  }
}

/** Checks an attestation against the challenge, our origin and rpID; UV is required. */
export async function verifyNewCredential(
  ctx: Ctx,
  challenge: string,
  response: RegistrationResponseJSON,
): Promise<NewCredential> {
  let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>
  try {
    result = await verifyRegistrationResponse({
      ...expectations(ctx, challenge, response),
      requireUserPresence: true,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    })
  } catch (error) {
    throw fail.invalid('response', `the passkey did not verify: ${reason(error)}`)
  }
  if (!result.verified) throw fail.invalid('response', 'the passkey did not verify')
  const info = result.registrationInfo
  return {
    id: info.credential.id,
    publicKey: info.credential.publicKey,
    counter: info.credential.counter,
    transports: info.credential.transports,
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
  }
}

/**
 * Checks an assertion by a stored passkey: challenge, origin, rpID, UV, signature, and a
 * counter that moved forward (a counter that goes back suggests a cloned authenticator).
 * Returns what to record about the use. Any failure is a failed login (401).
 */
export async function verifyAssertion(
  ctx: Ctx,
  challenge: string,
  response: AuthenticationResponseJSON,
  passkey: PasskeyRow,
): Promise<{ counter: number; deviceType: string; backedUp: boolean }> {
  let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>
  try {
    result = await verifyAuthenticationResponse({
      ...expectations(ctx, challenge, response),
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(passkey.public_key),
        counter: passkey.counter,
        transports: transportsOf(passkey),
      },
      requireUserVerification: true,
    })
  } catch (error) {
    throw fail.unauthorized(`passkey login failed: ${reason(error)}`)
  }
  if (!result.verified) throw fail.unauthorized('passkey login failed')
  const info = result.authenticationInfo
  return {
    counter: info.newCounter,
    deviceType: info.credentialDeviceType,
    backedUp: info.credentialBackedUp,
  }
}

export function transportsOf(passkey: PasskeyRow): string[] | undefined {
  return passkey.transports ? (JSON.parse(passkey.transports) as string[]) : undefined
}
