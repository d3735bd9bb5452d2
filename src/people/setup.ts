import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { hashToken, randomBase62, sameHash } from '../core/ids.ts'

/**
 * First run. Until an owner exists, creating the first account needs a one-time setup token
 * that only the operator sees (printed by `hark serve`, written 0600 in the data dir): whoever
 * reaches a fresh server first must not own it.
 */
const SETUP_TTL_MS = 3600 * 1000
export const SETUP_KEY = 'setup_token'

export const setupTokenFile = (ctx: Pick<Ctx, 'config'>) => join(ctx.config.dataDir, 'setup-token')

/** The link that opens the setup wizard; the token rides in the fragment, never in logs. */
export const setupLink = (ctx: Pick<Ctx, 'config'>, token: string) =>
  `${ctx.config.baseUrl}/setup#token=${token}`

/**
 * Issues a fresh setup token (replacing any earlier one) while setup is not done, and returns
 * the setup link; returns undefined once there is an owner.
 */
export async function issueSetupToken(ctx: Ctx): Promise<string | undefined> {
  if (await ctx.store.users.hasOwner()) {
    await finishSetup(ctx)
    return undefined
  }
  const token = randomBase62(32) // ~190 bits
  const record = {
    hash: Buffer.from(hashToken(token)).toString('hex'),
    expires_at: ctx.clock.now() + SETUP_TTL_MS,
  }
  await ctx.writes.apply(
    async (tx) => await tx.store.settings.set(SETUP_KEY, JSON.stringify(record)),
  )
  const link = setupLink(ctx, token)
  writeFileSync(setupTokenFile(ctx), `${link}\n`, { mode: 0o600 })
  return link
}

/** Throws unless `token` is the live setup token and setup is still open. */
export async function checkSetupToken(ctx: Ctx, token: unknown): Promise<void> {
  if (await ctx.store.users.hasOwner()) throw fail.conflict('setup is already done')
  const raw = await ctx.store.settings.get(SETUP_KEY)
  const record = raw ? (JSON.parse(raw) as { hash: string; expires_at: number }) : undefined
  const valid =
    typeof token === 'string' &&
    record !== undefined &&
    record.expires_at > ctx.clock.now() &&
    sameHash(Buffer.from(record.hash, 'hex'), hashToken(token))
  if (!valid) {
    throw fail.forbidden(
      'setup needs the one-time setup link that `hark serve` prints (it expires after an hour; restart to get a new one)',
    )
  }
}

/** Setup is done: the token is gone for good, from the database and the disk. */
export async function finishSetup(ctx: Ctx): Promise<void> {
  await ctx.writes.apply(async (tx) => await tx.store.settings.remove(SETUP_KEY))
  // At once, not once durable: with an owner in place the token is refused anyway.
  rmSync(setupTokenFile(ctx), { force: true })
}
