import {
  applies,
  MAX_POLICY_MS,
  matches,
  type PolicyClaim,
  policyText,
  ruleText,
} from '../shared/policy.ts'
import { type Action, summaryOf } from './actions.ts'
import { type AgentClient, HarkError, type ServedPolicy } from './client.ts'
import { type Env, updateConfig } from './profiles.ts'
import { CLOCK_SKEW_MS, checkAssertion } from './proof.ts'
import { type Pinned, pinnedApprovers } from './trust.ts'

/**
 * Approval policies, the agent's part (docs/security.md "Approval policies"): the rules the
 * server hands over are taken only when the person's passkey signed them, checked here with the
 * keys pinned at `hark init`, as signed answers are. The server only stores and relays: a rule
 * it widened, moved to another channel, kept past its expiry or made up is ignored, with a
 * warning; a revocation the person signed is remembered in the profile, so a server that later
 * hands the policy back without it gets nothing.
 */
export type { ServedPolicy }

export interface TrustedPolicy {
  id: string
  claim: PolicyClaim
}

/** How a hook asks the person's signed rules about an action (`HookDeps.policy`). */
export type PolicyLookup = (action: Action, summary: string) => Promise<PolicyDecision | undefined>

export interface PolicyDecision {
  effect: 'allow' | 'deny'
  policy: TrustedPolicy
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const isClaim = (value: unknown): value is PolicyClaim => {
  const c = value as PolicyClaim | undefined
  return (
    typeof c === 'object' &&
    c !== null &&
    c.type === 'hark.policy' &&
    typeof c.id === 'string' &&
    Number.isSafeInteger(c.created_at) &&
    Number.isSafeInteger(c.expires_at) &&
    typeof c.rule === 'object' &&
    c.rule !== null &&
    (c.rule.effect === 'allow' || c.rule.effect === 'deny') &&
    typeof c.rule.tool === 'string' &&
    typeof c.rule.match === 'object' &&
    typeof c.rule.where === 'object'
  )
}

const signedAt = (proof: unknown) => (proof as { answered_at?: unknown } | null)?.answered_at

/** Why a served policy is not taken, or undefined when it is trusted. */
function refusal(
  served: ServedPolicy,
  claim: unknown,
  pinned: Pinned | undefined,
  now: number,
): string | undefined {
  if (!isClaim(claim) || policyText(claim) !== served.claim) return 'the claim is malformed'
  if (claim.id !== served.id) return 'the claim is for another policy'
  if (served.proof === undefined || served.proof === null) return 'it is not signed'
  const check = checkAssertion(served.proof, served.claim, pinned)
  if (!check.ok) {
    return check.reason === 'the signature is not over this answer to this question'
      ? 'the signature is not over this rule (changed or widened)'
      : check.reason
  }
  if (signedAt(served.proof) !== claim.created_at) return 'the claim is not dated as signed'
  if (claim.expires_at - claim.created_at > MAX_POLICY_MS) return 'it lasts more than 30 days'
  if (claim.created_at > now + CLOCK_SKEW_MS) return 'it is dated in the future'
  if (claim.expires_at <= now) return 'it has expired'
  const where = claim.rule.where
  if (where.kind !== 'all' && where.channel_id !== pinned?.channel_id) {
    return 'it is for another channel'
  }
  return undefined
}

/** A revocation the person signed for `policy`, or undefined. */
function signedRevocation(served: ServedPolicy, pinned: Pinned | undefined): boolean {
  const r = served.revocation
  if (!r) return false
  const claim = parse(r.claim) as { type?: unknown; policy_id?: unknown; revoked_at?: unknown }
  if (claim?.type !== 'hark.policy.revoke' || claim.policy_id !== served.id) return false
  if (policyText(claim as never) !== r.claim) return false
  if (signedAt(r.proof) !== claim.revoked_at) return false
  return checkAssertion(r.proof, r.claim, pinned).ok
}

/**
 * The policies of `served` this agent trusts now. Signed revocations are remembered in the
 * profile (until the policy would have expired); a policy seen revoked is never taken again.
 */
export function trustedPolicies(
  env: Env,
  profile: string,
  served: readonly ServedPolicy[],
  warn: (line: string) => void,
  now = Date.now(),
): TrustedPolicy[] {
  const pinned = pinnedApprovers(env, profile)
  const revoked = { ...(pinned?.revoked ?? {}) }
  const learned: Record<string, number> = {}
  const out: TrustedPolicy[] = []
  for (const p of served) {
    // Whatever the server sends: an entry that is not a policy is skipped, never a crash.
    if (typeof p?.id !== 'string' || typeof p.claim !== 'string') continue
    const claim = parse(p.claim)
    if (revoked[p.id] !== undefined) continue
    if (p.revocation !== undefined) {
      // Revoked, or a server pretending so: either way the person is asked, which is safe. Only
      // a signed revocation is remembered.
      if (signedRevocation(p, pinned)) {
        learned[p.id] = isClaim(claim) ? claim.expires_at : now + MAX_POLICY_MS
      }
      continue
    }
    const why = refusal(p, claim, pinned, now)
    if (why !== undefined) {
      warn(`policy ${p.id} ignored: ${why}`)
      continue
    }
    out.push({ id: p.id, claim: claim as PolicyClaim })
  }
  if (Object.keys(learned).length > 0) rememberRevoked(env, profile, learned, now)
  return out
}

function rememberRevoked(env: Env, profile: string, learned: Record<string, number>, now: number) {
  try {
    updateConfig(env, (config) => {
      const entry = config.profiles[profile]
      const approvers = entry?.approvers as Pinned | undefined
      if (!entry || !approvers) return
      const kept = Object.entries(approvers.revoked ?? {}).filter(([, until]) => until > now)
      entry.approvers = {
        ...approvers,
        revoked: { ...Object.fromEntries(kept), ...learned },
      } as Pinned
    })
  } catch {
    // This run still refused the policy; only the memory across runs is lost.
  }
}

/**
 * What the policies decide about an action: a deny rule wins over an allow; undefined when no
 * rule covers it (the person is asked).
 */
export function decide(
  policies: readonly TrustedPolicy[],
  action: { tool: string; input: unknown; cwd?: string },
  channelId: string,
): PolicyDecision | undefined {
  const covering = policies.filter(
    (p) => applies(p.claim.rule, channelId, action.cwd) && matches(p.claim.rule, action),
  )
  const deny = covering.find((p) => p.claim.rule.effect === 'deny')
  if (deny) return { effect: 'deny', policy: deny }
  const allow = covering.find((p) => p.claim.rule.effect === 'allow')
  return allow ? { effect: 'allow', policy: allow } : undefined
}

/**
 * The hook's question before it asks the person: fetches the policies, keeps the trusted ones,
 * decides, and reports a use (one quiet line in the thread). With no trusted rule the person is
 * asked as before; a server that cannot be reached throws, as the question would.
 */
export async function decideByPolicy(
  client: AgentClient,
  env: Env,
  profile: string,
  action: { tool: string; input: unknown; cwd?: string },
  summary: string,
  warn: (line: string) => void,
): Promise<PolicyDecision | undefined> {
  let decision: PolicyDecision | undefined
  try {
    const { policies } = await client.policies()
    if (!Array.isArray(policies) || policies.length === 0) return undefined
    const pinned = pinnedApprovers(env, profile)
    if (!pinned) return undefined
    decision = decide(trustedPolicies(env, profile, policies, warn), action, pinned.channel_id)
  } catch (error) {
    // A server without policies (an older Hark) answers 404: the person is asked as before.
    // Any other failure (no server, a bad token) is the one the question would meet too:
    // thrown, so the hook says it once and decides nothing, without a second wait.
    if (error instanceof HarkError && error.status === 404) return undefined
    throw error
  }
  if (decision) {
    try {
      await client.policyUse(decision.policy.id, summary.slice(0, 300))
    } catch {
      // The decision stands; only the count and the quiet line are lost.
    }
  }
  return decision
}

/** The hook's answer when a policy decided, or undefined when none covers the action. */
export async function byPolicy(
  deps: { policy?: PolicyLookup },
  action: Action,
): Promise<{ behavior: 'allow' } | { behavior: 'deny'; message: string } | undefined> {
  const decision = await deps.policy?.(action, summaryOf(action))
  if (!decision) return undefined
  if (decision.effect === 'allow') return { behavior: 'allow' }
  const rule = decision.policy.claim.rule
  return {
    behavior: 'deny',
    message: rule.message?.trim() || `Denied by the person's rule: ${ruleText(rule)}.`,
  }
}
