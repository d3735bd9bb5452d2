import { type PersonAuth, requireSession } from '../../access/person.ts'
import { issueToken } from '../../access/tokens/service.ts'
import { channelsChanged, personChannel } from '../../channels/service.ts'
import type { Ctx } from '../../core/context.ts'
import { fail } from '../../core/errors.ts'
import { hashToken, newId, newSecret } from '../../core/ids.ts'
import { cleanLabel } from '../../core/labels.ts'
import { newChannel } from '../service.ts'

/**
 * Join links behind `hark join LINK`: the person makes a single-use link that lives 15 minutes;
 * redeeming it gives an agent the token of a new channel, or a new token for an existing one
 * (re-keying: the channel's old tokens stop working at once).
 */
const TTL_MS = 15 * 60 * 1000

export async function createJoinLink(
  ctx: Ctx,
  person: PersonAuth,
  input: { label?: unknown; channel_id?: unknown },
) {
  // A join link mints an agent token (or re-keys a channel, killing its agent's token): a
  // leaked person token must not be able to take over or add an agent.
  requireSession(person, 'making a join link')
  let channelId: string | null = null
  let label: string | null = null
  if (input.channel_id !== undefined) {
    if (typeof input.channel_id !== 'string') throw fail.invalid('channel_id', 'must be a string')
    channelId = (await personChannel(ctx, person.user.id, input.channel_id)).id
  } else if (input.label !== undefined) {
    label = cleanLabel(input.label)
  }
  const { secret: code, hash } = newSecret(32)
  const now = ctx.clock.now()
  const row = await ctx.writes.apply(
    async (tx) =>
      await tx.store.joinLinks.insert({
        id: newId('join'),
        hash,
        user_id: person.user.id,
        channel_id: channelId,
        label,
        created_at: now,
        expires_at: now + TTL_MS,
      }),
  )
  return {
    join_link: {
      id: row.id,
      // The code rides in the fragment: it never reaches a server log or a Referer.
      link: `${ctx.config.baseUrl}/join#${code}`,
      code,
      channel_id: channelId,
      expires_at: row.expires_at,
    },
  }
}

export async function redeemJoinLink(ctx: Ctx, code: unknown) {
  return await ctx.writes.apply(async (tx) => {
    const redeemed = await redeem(ctx, code)
    await channelsChanged(tx, redeemed.userId)
    return { token: redeemed.token, channel: redeemed.channel }
  })
}

async function redeem(ctx: Ctx, code: unknown) {
  if (typeof code !== 'string' || code === '') throw fail.invalid('code', 'is required')
  return await ctx.writes.apply(async (tx) => {
    const link = await tx.store.joinLinks.byHash(hashToken(code))
    const now = ctx.clock.now()
    if (
      !link ||
      link.used_at !== null ||
      link.expires_at <= now ||
      !(await tx.store.joinLinks.use(link.id, now))
    ) {
      throw fail.forbidden(
        'this join link is not valid (used or expired); make a new one in the app',
      )
    }
    const user = await tx.store.users.byId(link.user_id)
    if (!user)
      throw fail.forbidden(
        'this join link is not valid (used or expired); make a new one in the app',
      )
    let channel = link.channel_id ? await tx.store.channels.byId(link.channel_id) : undefined
    if (link.channel_id) {
      if (!channel) throw fail.forbidden('the channel of this join link no longer exists')
      await tx.store.tokens.revokeChannel(channel.id, now)
    } else {
      channel = await newChannel(ctx, user.id, link.label ?? 'Agent')
    }
    const { token } = await issueToken(ctx, 'agent', user, channel, channel.label)
    return { token, channel: { id: channel.id, label: channel.label }, userId: user.id }
  })
}
