import { fail } from '../core/errors.ts'
import type { Ctx } from '../server/context.ts'

export const REGISTRATION_MODES = ['closed', 'invite', 'open'] as const
export type RegistrationMode = (typeof REGISTRATION_MODES)[number]

/** Who may create an account: the owner only (closed, the default), invitees, or anyone. */
export function registrationMode(ctx: Pick<Ctx, 'store'>): RegistrationMode {
  const v = ctx.store.settings.get('registration')
  return (REGISTRATION_MODES as readonly string[]).includes(v ?? '')
    ? (v as RegistrationMode)
    : 'closed'
}

export function setRegistrationMode(
  ctx: Pick<Ctx, 'store' | 'writes'>,
  mode: unknown,
): RegistrationMode {
  if (!(REGISTRATION_MODES as readonly unknown[]).includes(mode)) {
    throw fail.invalid('registration', `must be one of ${REGISTRATION_MODES.join(', ')}`)
  }
  ctx.writes.apply(() => ctx.store.settings.set('registration', mode as string))
  return mode as RegistrationMode
}
