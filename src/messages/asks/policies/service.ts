import type { Static } from 'elysia'
import { personChannel } from '../../../channels/service.ts'
import type { ChannelRow } from '../../../channels/store.ts'
import type { Ctx } from '../../../core/context.ts'
import { fail } from '../../../core/errors.ts'
import {
  MAX_POLICY_MS,
  type PolicyClaim,
  policyText,
  type RevocationClaim,
  ruleText,
} from '../../../shared/policy.ts'
import type { AnswerProof } from '../../../shared/proof.ts'
import { sendMessage } from '../../service.ts'
import { checkSignedText } from '../proof.ts'
import type { PolicyRecord } from './schema.ts'
import type { PolicyRow } from './store.ts'

/**
 * Approval policies, the server's part (docs/security.md "Approval policies"): it checks and
 * keeps what the person signed and hands it to the agents it names. It decides nothing: each
 * agent verifies the claim and its signature with the keys it pinned and evaluates the rule
 * itself, so a server that widens, moves or invents a rule changes nothing.
 */
export type PolicyRecordOut = Static<typeof PolicyRecord>

export function policyOf(row: PolicyRow): PolicyRecordOut {
  const out: PolicyRecordOut = {
    id: row.id,
    channel_id: row.channel_id,
    claim: row.claim,
    proof: JSON.parse(row.proof),
    created_at: row.created_at,
    expires_at: row.expires_at,
    uses: row.uses,
  }
  if (row.revocation !== null) out.revocation = JSON.parse(row.revocation)
  if (row.revoked_at !== null) out.revoked_at = row.revoked_at
  if (row.last_used_at !== null) out.last_used_at = row.last_used_at
  return out
}

/** Stores a policy the person signed, after checking the claim and the assertion. */
export async function createPolicy(
  ctx: Ctx,
  userId: string,
  claim: PolicyClaim,
  proof: AnswerProof,
): Promise<PolicyRow> {
  if (claim.expires_at <= claim.created_at) {
    throw fail.invalid('claim.expires_at', 'must be after created_at')
  }
  if (claim.expires_at - claim.created_at > MAX_POLICY_MS) {
    throw fail.invalid('claim.expires_at', 'is more than 30 days after created_at')
  }
  if (proof.answered_at !== claim.created_at) {
    throw fail.invalid('proof.answered_at', "must be the claim's created_at")
  }
  const where = claim.rule.where
  const channelId = where.kind === 'all' ? null : where.channel_id
  if (channelId !== null) {
    try {
      await personChannel(ctx, userId, channelId)
    } catch {
      throw fail.invalid('claim.rule.where.channel_id', 'is not one of your channels')
    }
  }
  if (await ctx.store.policies.byId(claim.id)) throw fail.conflict('claim.id: already used')
  await checkSignedText(ctx, userId, policyText(claim), proof, 0)
  return await ctx.writes.apply(async (tx) => {
    // Expired rules are of no use to anyone (an agent refuses them): cleared as rules are added.
    await tx.store.policies.eraseExpired(ctx.clock.now())
    if (await tx.store.policies.byId(claim.id)) throw fail.conflict('claim.id: already used')
    return await tx.store.policies.insert({
      id: claim.id,
      user_id: userId,
      channel_id: channelId,
      claim: policyText(claim),
      proof: JSON.stringify(proof),
      created_at: claim.created_at,
      expires_at: claim.expires_at,
    })
  })
}

/** Records a revocation the person signed; it is handed to agents until the policy expires. */
export async function revokePolicy(
  ctx: Ctx,
  userId: string,
  id: string,
  claim: RevocationClaim,
  proof: AnswerProof,
): Promise<PolicyRow> {
  const row = await ctx.store.policies.byId(id)
  if (!row || row.user_id !== userId || row.expires_at <= ctx.clock.now()) {
    throw fail.notFound('policy')
  }
  if (claim.policy_id !== id) throw fail.invalid('claim.policy_id', 'is not this policy')
  if (proof.answered_at !== claim.revoked_at) {
    throw fail.invalid('proof.answered_at', "must be the claim's revoked_at")
  }
  if (row.revoked_at !== null) return row
  await checkSignedText(ctx, userId, policyText(claim), proof, row.created_at)
  const revocation = JSON.stringify({ claim: policyText(claim), proof })
  const done = await ctx.writes.apply(
    async (tx) => await tx.store.policies.revoke(id, revocation, claim.revoked_at),
  )
  return done ?? ((await ctx.store.policies.byId(id)) as PolicyRow)
}

export const listPolicies = async (ctx: Ctx, userId: string) =>
  (await ctx.store.policies.ofUser(userId, ctx.clock.now())).map(policyOf)

/** What an agent is handed: its channel's policies and the person's all-agents ones. */
export const channelPolicies = async (ctx: Ctx, channel: ChannelRow) =>
  (await ctx.store.policies.forChannel(channel.user_id, channel.id, ctx.clock.now())).map(policyOf)

/**
 * An agent decided an action by a policy: the use is counted and the thread gets one quiet line
 * (silent: no push), so the person sees what ran without being asked.
 */
export async function recordUse(
  ctx: Ctx,
  channel: ChannelRow,
  id: string,
  summary: string,
): Promise<PolicyRow> {
  const row = await ctx.store.policies.byId(id)
  const now = ctx.clock.now()
  const served =
    row &&
    row.user_id === channel.user_id &&
    (row.channel_id === null || row.channel_id === channel.id) &&
    row.expires_at > now
  if (!row || !served) throw fail.notFound('policy')
  const claim = JSON.parse(row.claim) as PolicyClaim
  const verb = claim.rule.effect === 'allow' ? 'Allowed' : 'Denied'
  return await ctx.writes.apply(async (tx) => {
    const used = (await tx.store.policies.recordUse(id, now)) as PolicyRow
    await sendMessage(ctx, channel, 'agent', {
      body: { text: `${verb} by rule “${ruleText(claim.rule)}”: ${summary}` },
      silent: true,
    })
    return used
  })
}
