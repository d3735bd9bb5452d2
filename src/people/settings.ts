import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'

export const REGISTRATION_MODES = ['closed', 'invite', 'open'] as const
export type RegistrationMode = (typeof REGISTRATION_MODES)[number]

/** Who may create an account: the owner only (closed, the default), invitees, or anyone. */
export async function registrationMode(ctx: Pick<Ctx, 'store'>): Promise<RegistrationMode> {
  const v = await ctx.store.settings.get('registration')
  return (REGISTRATION_MODES as readonly string[]).includes(v ?? '')
    ? (v as RegistrationMode)
    : 'closed'
}

export async function setRegistrationMode(
  ctx: Pick<Ctx, 'store' | 'writes'>,
  mode: unknown,
): Promise<RegistrationMode> {
  if (!(REGISTRATION_MODES as readonly unknown[]).includes(mode)) {
    throw fail.invalid('registration', `must be one of ${REGISTRATION_MODES.join(', ')}`)
  }
  await ctx.writes.apply(async (tx) => await tx.store.settings.set('registration', mode as string))
  return mode as RegistrationMode
}
