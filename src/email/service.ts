import { type Admission, admit, cleanEmail, createAdmittedPerson } from '../people/admission.ts'
import type { UserRow } from '../people/store.ts'
import type { Ctx } from '../server/context.ts'
import { fail, HarkError } from '../server/errors.ts'
import { startSession } from '../sessions/service.ts'
import { codeMail } from './code-mail.ts'
import {
  CODE_DIGITS,
  CODE_TTL_MS,
  codeHash,
  codeMatches,
  MAX_TRIES,
  newCode,
  normalizeCode,
  openData,
  type Purpose,
  parsePurpose,
  sealData,
} from './codes.ts'
import { emailLimiters } from './limits.ts'
import type { Mailer, OutgoingMail } from './mailer.ts'
import type { StartRequest, StartResponse, VerifyRequest } from './schema.ts'

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

/** Stores a fresh code for the address and purpose, replacing (voiding) any earlier one. */
function issueCode(ctx: Ctx, email: string, purpose: Purpose, data: object): string {
  const now = ctx.clock.now()
  ctx.store.emailCodes.removeExpired(now)
  const code = newCode()
  ctx.store.emailCodes.put({
    email,
    purpose,
    code_hash: codeHash(email, purpose, code),
    data: sealData(email, purpose, data),
    created_at: now,
    expires_at: now + CODE_TTL_MS,
  })
  return code
}

/**
 * Sends after the answer, on a timer: the request then does the same work whether a mail goes
 * out or not, and a slow SMTP server cannot show in the response time.
 */
function sendLater(ctx: Ctx, mailer: Mailer, mail: OutgoingMail): void {
  setTimeout(() => {
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
function startLogin(ctx: Ctx, mailer: Mailer, email: string): void {
  const code = issueCode(ctx, email, 'login', {})
  if (ctx.store.users.byEmail(email)) sendLater(ctx, mailer, codeMail(ctx, email, 'login', code))
}

/**
 * A sign-up code. Admission is checked first and refusals are explicit (sign-up tells anyway
 * whether an address has an account). The send is awaited: on first-run setup a broken SMTP
 * setting must show as an error, not as a mail that never comes.
 */
async function startSignUp(ctx: Ctx, mailer: Mailer, email: string, req: StartRequest) {
  const admission: Admission = { setup_token: req.setup_token, invite: req.invite }
  const admitted = admit(ctx, admission, email)
  const signUp: SignUp = { ...admission, name: req.name?.trim() || null }
  const code = issueCode(ctx, email, 'signup', signUp)
  const use = admitted.kind === 'owner' ? 'setup' : 'signup'
  try {
    await mailer.send(codeMail(ctx, email, use, code))
  } catch (error) {
    ctx.store.emailCodes.remove(email, 'signup')
    ctx.log.error(`email sign-up code to ${email} not sent: ${(error as Error)?.message ?? error}`)
    throw fail.unavailable(
      'the code could not be mailed; ask the operator to check the SMTP settings',
    )
  }
}

export async function startEmailCode(ctx: Ctx, req: StartRequest): Promise<StartResponse> {
  const mailer = requireMailer(ctx)
  const email = cleanEmail(req.email)
  const purpose = parsePurpose(req.purpose)
  emailLimiters(ctx).startsPerAddress.take(email.toLowerCase())
  if (purpose === 'login') startLogin(ctx, mailer, email)
  else await startSignUp(ctx, mailer, email, req)
  return STARTED
}

/**
 * Checks a code and, when it is right, consumes it and returns what it carries. Failures are
 * returned, not thrown, so that the caller's transaction commits the counted wrong try.
 */
function redeemCode<T>(ctx: Ctx, email: string, purpose: Purpose, code: string): T | HarkError {
  const row = ctx.store.emailCodes.get(email, purpose)
  if (!row) return fail.invalid('code', 'no code is waiting for this address; ask for a new one')
  if (row.expires_at <= ctx.clock.now())
    return fail.invalid('code', 'has expired; ask for a new one')
  if (row.tries >= MAX_TRIES) {
    return fail.invalid('code', 'was tried wrong too many times; ask for a new one')
  }
  const data = row.data === null ? undefined : openData<T>(email, purpose, row.data)
  if (data === undefined) {
    return fail.invalid('code', 'was issued before the server restarted; ask for a new one')
  }
  if (!codeMatches(row.code_hash, email, purpose, code)) {
    const left = MAX_TRIES - ctx.store.emailCodes.addTry(email, purpose)
    return fail.invalid(
      'code',
      left > 0
        ? `is wrong (${left} ${left === 1 ? 'try' : 'tries'} left)`
        : 'is wrong, and that was the last try; ask for a new one',
    )
  }
  ctx.store.emailCodes.remove(email, purpose)
  return data
}

/**
 * The first email-code login of an account whose address nobody had proven (a passkey sign-up in
 * open mode or with an unbound invite): whoever made it may not own the address, and the mailbox's
 * owner just proved they do. The account becomes theirs alone: it is marked verified, and every
 * way in or out that nobody vouched for goes: passkeys, sessions, person tokens and push devices
 * (which receive message previews and can answer questions). Runs inside the login's transaction,
 * before the new session starts.
 */
function claimAccount(ctx: Ctx, user: UserRow): UserRow {
  ctx.store.users.markVerified(user.id)
  ctx.store.passkeys.removeByUser(user.id)
  ctx.store.sessions.removeAll(user.id)
  ctx.store.tokens.revokePersonTokens(user.id, ctx.clock.now())
  ctx.store.push.removeByUser(user.id)
  ctx.log.info(`${user.id}: address proven by email code; earlier credentials dropped`)
  return { ...user, email_verified: 1 }
}

/**
 * Redeems a code for a session: a login, or a sign-up that creates the account. One immediate
 * transaction: the code serves once even against parallel requests, and a sign-up that admission
 * now refuses (the invite got used meanwhile) leaves the code as it was.
 */
export function verifyEmailCode(
  ctx: Ctx,
  req: VerifyRequest,
  userAgent: string | null,
): { user: UserRow; setCookie: string } {
  requireMailer(ctx)
  const email = cleanEmail(req.email)
  const purpose = parsePurpose(req.purpose)
  const code = normalizeCode(req.code)
  if (!code) throw fail.invalid('code', `must be the ${CODE_DIGITS} digits from the mail`)
  const outcome = ctx.db
    .transaction(() => {
      if (purpose === 'login') {
        const redeemed = redeemCode<object>(ctx, email, 'login', code)
        if (redeemed instanceof HarkError) return redeemed
        const found = ctx.store.users.byEmail(email)
        // Only a code that was never mailed (no account), or an account removed since.
        if (!found) return fail.invalid('email', 'has no account here')
        const user = found.email_verified ? found : claimAccount(ctx, found)
        return { user, setCookie: startSession(ctx, user, userAgent).setCookie }
      }
      const signUp = redeemCode<SignUp>(ctx, email, 'signup', code)
      if (signUp instanceof HarkError) return signUp
      const { user } = createAdmittedPerson(
        ctx,
        signUp,
        { email, name: signUp.name, emailProven: true },
        () => null,
      )
      return { user, setCookie: startSession(ctx, user, userAgent).setCookie }
    })
    .immediate()
  if (outcome instanceof HarkError) throw outcome
  return outcome
}
