import type { EmailLimits } from '../../../access/email-limits.ts'
import { startSession } from '../../../access/sessions/service.ts'
import type { Ctx } from '../../../core/context.ts'
import { fail, HarkError } from '../../../core/errors.ts'
import { randomBase62, sameHash } from '../../../core/ids.ts'
import type { Mailer, OutgoingMail } from '../../../core/mailer.ts'
import type { UserRow } from '../../store.ts'
import { type Admission, admit, cleanEmail, createAdmittedPerson } from '../admission.ts'
import { codeMail } from './code-mail.ts'
import {
  askerTag,
  CODE_DIGITS,
  CODE_TTL_MS,
  codeHash,
  codeMatches,
  dataContext,
  MAX_OTHER_TRIES,
  MAX_TRIES,
  newCode,
  normalizeCode,
  type Purpose,
  parsePurpose,
} from './codes.ts'
import type { StartRequest, StartResponse, VerifyRequest } from './schema.ts'
import type { EmailCodeRow } from './store.ts'

/**
 * Email login codes: ask for a code (`start`), get it by mail, hand it back (`verify`) for a
 * session. The same for signing up, where admission (setup token, invite, open mode) is
 * decided when the code is asked for and again, atomically, when it is redeemed.
 */

/** What a sign-up code remembers until it is redeemed (sealed in the row). */
interface SignUp extends Admission {
  name: string | null
}

const STARTED: StartResponse = { ok: true, expires_in: CODE_TTL_MS / 1000 }

export function requireMailer(ctx: Ctx): Mailer {
  if (!ctx.mailer) {
    throw fail.unavailable(
      'email login is not available: this server has no SMTP server configured (--smtp-url)',
    )
  }
  return ctx.mailer
}

/** Who is asking or trying a code: the client address, as per-IP limits count it. */
export interface Requester {
  ip: string
}

/**
 * Stores a fresh code for the address and purpose, next to any still live: a new code never voids
 * one already mailed, since whoever asks, the mailbox's owner may be typing the earlier one.
 * Undefined when the address has had its codes for the hour from all sources together
 * (`codesPerAddress`): then nothing is stored or mailed, and the caller answers the same.
 */
async function issueCode(
  ctx: Ctx,
  limits: EmailLimits,
  from: Requester,
  email: string,
  purpose: Purpose,
  data: object,
): Promise<{ id: string; code: string } | undefined> {
  const now = ctx.clock.now()
  const code = newCode()
  const id = `code_${randomBase62(18)}`
  const issued = await ctx.writes.apply(async (tx) => {
    await tx.store.emailCodes.removeExpired(now)
    if (!limits.codesPerAddress.tryTake(email.toLowerCase())) return false
    // All three under one period's keys: the period in `data` names them when the code is tried.
    const keys = await ctx.keys.current()
    const hashKey = keys.key('email-code')
    await tx.store.emailCodes.insert({
      id,
      email,
      purpose,
      code_hash: codeHash(hashKey, email, purpose, code),
      data: keys.seal('email-data', dataContext(email, purpose), data),
      asked_from: askerTag(hashKey, from.ip),
      created_at: now,
      expires_at: now + CODE_TTL_MS,
    })
    return true
  })
  return issued ? { id, code } : undefined
}

/**
 * Sends after the answer, on a timer: the request then does the same work whether a mail goes
 * out or not, and a slow SMTP server cannot show in the response time.
 */
function sendLater(ctx: Ctx, mailer: Mailer, mail: OutgoingMail): void {
  setTimeout(async () => {
    // Not before the code it carries is durable: a crash must not leave a mailed code unknown.
    await ctx.writes.settled()?.catch(() => {})
    mailer.send(mail).catch((error: unknown) => {
      ctx.log.error(
        `email login code to ${mail.to} not sent: ${(error as Error)?.message ?? error}`,
      )
    })
  }, 0)
}

/**
 * A login code. An address without an account gets a code too, one that is never mailed: the
 * answer, its timing, the tries and the limits are then the same for every address, so none of
 * them tells who has an account here.
 */
async function startLogin(
  ctx: Ctx,
  mailer: Mailer,
  limits: EmailLimits,
  from: Requester,
  email: string,
): Promise<void> {
  const issued = await issueCode(ctx, limits, from, email, 'login', {})
  if (issued && (await ctx.store.users.byEmail(email))) {
    sendLater(ctx, mailer, codeMail(ctx, email, 'login', issued.code))
  }
}

/**
 * A sign-up code. Admission is checked first and refusals are explicit (sign-up tells anyway
 * whether an address has an account). The send is awaited: on first-run setup a broken SMTP
 * setting must show as an error, not as a mail that never comes.
 */
async function startSignUp(
  ctx: Ctx,
  mailer: Mailer,
  limits: EmailLimits,
  from: Requester,
  email: string,
  req: StartRequest,
) {
  const admission: Admission = { setup_token: req.setup_token, invite: req.invite }
  const admitted = await admit(ctx, admission, email)
  const signUp: SignUp = { ...admission, name: req.name?.trim() || null }
  const issued = await issueCode(ctx, limits, from, email, 'signup', signUp)
  if (!issued) return
  const use = admitted.kind === 'owner' ? 'setup' : 'signup'
  try {
    await mailer.send(codeMail(ctx, email, use, issued.code))
  } catch (error) {
    await ctx.writes.apply(async (tx) => await tx.store.emailCodes.remove(issued.id))
    ctx.log.error(`email sign-up code to ${email} not sent: ${(error as Error)?.message ?? error}`)
    throw fail.unavailable(
      'the code could not be mailed; ask the operator to check the SMTP settings',
    )
  }
}

export async function startEmailCode(
  ctx: Ctx,
  limits: EmailLimits,
  from: Requester,
  req: StartRequest,
): Promise<StartResponse> {
  const mailer = requireMailer(ctx)
  const email = cleanEmail(req.email)
  const purpose = parsePurpose(req.purpose)
  limits.startsPerAddressFromIp.take(`${email.toLowerCase()}\n${from.ip}`)
  if (purpose === 'login') await startLogin(ctx, mailer, limits, from, email)
  else await startSignUp(ctx, mailer, limits, from, email, req)
  return STARTED
}

/**
 * Checks a code against every live code for the address and purpose and, when one is right,
 * consumes them all and returns what it carries. A wrong code counts a try against each code it
 * was compared with: against the asker's tries when it comes from the address that asked for that
 * code, else against the tries of all other addresses together. Failures are returned, not thrown,
 * so that the caller's transaction commits the counted wrong tries.
 */
async function redeemCode<T>(
  ctx: Ctx,
  from: Requester,
  email: string,
  purpose: Purpose,
  code: string,
): Promise<T | HarkError> {
  const now = ctx.clock.now()
  const rows = await ctx.store.emailCodes.byAddress(email, purpose)
  if (rows.length === 0) {
    return fail.invalid('code', 'no code is waiting for this address; ask for a new one')
  }
  const live = rows.filter((row) => row.expires_at > now)
  if (live.length === 0) return fail.invalid('code', 'has expired; ask for a new one')
  // Tampered with, or made under keys this server no longer holds (a restored backup): as good
  // as gone.
  const readable: { row: EmailCodeRow; data: T; key: Uint8Array }[] = []
  for (const row of live) {
    const key = await ctx.keys.of(row.data)
    const data = key?.open<T>('email-data', dataContext(email, purpose), row.data)
    if (key && data !== undefined) readable.push({ row, data, key: key.key('email-code') })
  }
  if (readable.length === 0) {
    return fail.invalid(
      'code',
      'was issued under keys this server no longer holds; ask for a new one',
    )
  }
  const candidates = readable.map((c) => {
    const asker = sameHash(c.row.asked_from, askerTag(c.key, from.ip))
    const left = asker ? MAX_TRIES - c.row.tries : MAX_OTHER_TRIES - c.row.other_tries
    return { ...c, asker, left }
  })
  const triable = candidates.filter((c) => c.left > 0)
  if (triable.length === 0) {
    return fail.invalid('code', 'was tried wrong too many times; ask for a new one')
  }
  const right = triable.find((c) => codeMatches(c.key, c.row.code_hash, email, purpose, code))
  if (right) {
    await ctx.store.emailCodes.removeAll(email, purpose)
    return right.data
  }
  // An earlier code, typed after its 10 minutes while a newer one is live: not a guess.
  let late = false
  for (const row of rows) {
    const key = row.expires_at <= now ? (await ctx.keys.of(row.data))?.key('email-code') : undefined
    if (key !== undefined && codeMatches(key, row.code_hash, email, purpose, code)) late = true
  }
  if (late) return fail.invalid('code', 'has expired; ask for a new one')
  for (const c of triable) {
    if (c.asker) await ctx.store.emailCodes.addTry(c.row.id)
    else await ctx.store.emailCodes.addOtherTry(c.row.id)
  }
  const left = Math.max(...triable.map((c) => c.left - 1))
  return fail.invalid(
    'code',
    left > 0
      ? `is wrong (${left} ${left === 1 ? 'try' : 'tries'} left)`
      : 'is wrong, and that was the last try; ask for a new one',
  )
}

/**
 * The first email-code login of an account whose address nobody had proven (a passkey sign-up in
 * open mode or with an unbound invite): whoever made it may not own the address, and the mailbox's
 * owner just proved they do. The account becomes theirs alone: it is marked verified, and every
 * way in or out that nobody vouched for goes: passkeys, sessions, person tokens and push devices
 * (which receive message previews and can answer questions). Runs inside the login's transaction,
 * before the new session starts.
 */
async function claimAccount(ctx: Ctx, user: UserRow): Promise<UserRow> {
  await ctx.store.users.markVerified(user.id)
  await ctx.store.passkeys.removeByUser(user.id)
  await ctx.store.sessions.removeAll(user.id)
  await ctx.store.tokens.revokePersonTokens(user.id, ctx.clock.now())
  await ctx.store.push.removeByUser(user.id)
  ctx.log.info(`${user.id}: address proven by email code; earlier credentials dropped`)
  return { ...user, email_verified: 1 }
}

/**
 * Redeems a code for a session: a login, or a sign-up that creates the account. One immediate
 * transaction: the code serves once even against parallel requests, and a sign-up that admission
 * now refuses (the invite got used meanwhile) leaves the code as it was.
 */
export async function verifyEmailCode(
  ctx: Ctx,
  from: Requester,
  req: VerifyRequest,
  userAgent: string | null,
): Promise<{ user: UserRow; setCookie: string }> {
  requireMailer(ctx)
  const email = cleanEmail(req.email)
  const purpose = parsePurpose(req.purpose)
  const code = normalizeCode(req.code)
  if (!code) throw fail.invalid('code', `must be the ${CODE_DIGITS} digits from the mail`)
  const outcome = await ctx.writes.apply(async (tx) => {
    if (purpose === 'login') {
      const redeemed = await redeemCode<object>(ctx, from, email, 'login', code)
      if (redeemed instanceof HarkError) return redeemed
      const found = await tx.store.users.byEmail(email)
      // Only a code that was never mailed (no account), or an account removed since.
      if (!found) return fail.invalid('email', 'has no account here')
      const user = found.email_verified ? found : await claimAccount(ctx, found)
      return { user, setCookie: (await startSession(ctx, user, userAgent)).setCookie }
    }
    const signUp = await redeemCode<SignUp>(ctx, from, email, 'signup', code)
    if (signUp instanceof HarkError) return signUp
    const { user } = await createAdmittedPerson(
      ctx,
      signUp,
      { email, name: signUp.name, emailProven: true },
      async () => null,
    )
    return { user, setCookie: (await startSession(ctx, user, userAgent)).setCookie }
  })
  if (outcome instanceof HarkError) throw outcome
  return outcome
}
