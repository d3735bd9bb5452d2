import { issueToken } from '../access/tokens/service.ts'
import type { TokenRow } from '../access/tokens/store.ts'
import type { ChannelRow } from '../channels/store.ts'
import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { newId } from '../core/ids.ts'
import { cleanLabel } from '../core/labels.ts'
import { LIMITS } from '../messages/limits.ts'
import type { UserRow } from './store.ts'

/** What provisioning needs: the stores and a clock, not a running server. */
export type Provisioning = Pick<Ctx, 'writes' | 'store' | 'clock'>

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export async function addUser(
  p: Provisioning,
  input: { email: string; name?: string; owner?: boolean },
): Promise<UserRow> {
  const email = input.email.trim()
  if (!EMAIL.test(email) || email.length > 254)
    throw fail.invalid('email', 'is not an email address')
  return await p.writes.apply(async (tx) => {
    if (await tx.store.users.byEmail(email)) throw fail.conflict(`${email} already has an account`)
    if (input.owner && (await tx.store.users.hasOwner()))
      throw fail.conflict('this server already has an owner')
    return await tx.store.users.insert({
      id: newId('usr'),
      email,
      name: input.name?.trim() || null,
      is_owner: input.owner === true,
      created_at: p.clock.now(),
      // The operator vouches for the address.
      email_verified: true,
    })
  })
}

export async function userByEmail(p: Provisioning, email: string): Promise<UserRow> {
  const user = await p.store.users.byEmail(email.trim())
  if (!user) throw fail.notFound(`person ${email}`)
  return user
}

/**
 * A new channel of the person, unless they have `LIMITS.channelsPerPerson` already (409): each
 * is an agent that may send, store files and push to the person's devices. Call in a transaction.
 */
export async function newChannel(
  p: Provisioning,
  userId: string,
  label: string,
): Promise<ChannelRow> {
  const channel = await p.store.channels.insert(
    newId('ch'),
    userId,
    label,
    p.clock.now(),
    LIMITS.channelsPerPerson,
  )
  if (!channel) {
    throw fail.conflict(
      `you have ${LIMITS.channelsPerPerson} connected agents, the most there can be; ` +
        'delete a channel in the app to connect another',
    )
  }
  return channel
}

/** A new channel for the person, with its agent token (shown once, stored as a hash). */
export async function addChannel(
  p: Provisioning,
  input: { email: string; label?: string },
): Promise<{ channel: ChannelRow; token: string }> {
  const label = cleanLabel(input.label ?? 'Agent')
  return await p.writes.apply(async () => {
    const user = await userByEmail(p, input.email)
    const channel = await newChannel(p, user.id, label)
    return { channel, token: (await issueToken(p, 'agent', user, channel, label)).token }
  })
}

/** A person token, for scripts that act as the person. */
export async function addPersonToken(
  p: Provisioning,
  input: { email: string; label?: string },
): Promise<{ token: string; row: TokenRow }> {
  const label = input.label === undefined ? null : cleanLabel(input.label)
  return await p.writes.apply(
    async () => await issueToken(p, 'person', await userByEmail(p, input.email), null, label),
  )
}
