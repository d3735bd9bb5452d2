import {
  type PolicyClaim,
  type PolicyRule,
  policyText,
  type RevocationClaim,
} from '../../../src/shared/policy.ts'
import type { AnswerProof } from '../../../src/shared/proof.ts'
import { base64url } from '../../../src/shared/proof.ts'
import { api } from './api.ts'
import { assert, myPasskeys, NotSigned } from './signing.ts'

/**
 * Approval policies, the app's part (docs/security.md "Approval policies"): a rule is signed
 * here with the person's passkey, one prompt, over the canonical claim (src/shared/policy.ts);
 * the server keeps it and hands it to the agents it names, which check the signature
 * themselves. Revoking signs too.
 */
export interface PolicyRecord {
  id: string
  channel_id: string | null
  claim: string
  created_at: number
  expires_at: number
  revoked_at?: number
  uses: number
  last_used_at?: number
}

export const listPolicies = () =>
  api<{ policies: PolicyRecord[] }>('GET', '/v1/app/policies').then((r) => r.policies)

/** The lifetimes the card offers; "today" ends at the person's local midnight. */
export type Lifetime = 'hour' | 'today' | 'week' | 'month'

export function expiry(lifetime: Lifetime, from: number): number {
  if (lifetime === 'hour') return from + 3600_000
  if (lifetime === 'week') return from + 7 * 24 * 3600_000
  if (lifetime === 'month') return from + 30 * 24 * 3600_000
  const midnight = new Date(from)
  midnight.setHours(24, 0, 0, 0)
  return midnight.getTime()
}

const newPolicyId = () => `pol_${base64url.encode(crypto.getRandomValues(new Uint8Array(15)))}`

async function signed(textAt: (at: number) => string): Promise<AnswerProof> {
  const passkeys = await myPasskeys()
  if (passkeys.length === 0) {
    throw new NotSigned(
      'unsupported',
      'Rules and their revocations are signed with a passkey: add one in Settings.',
    )
  }
  return assert(textAt, 0, passkeys)
}

/** Signs `rule` (one passkey prompt) and adds it; answers the stored record. */
export async function addPolicy(rule: PolicyRule, lifetime: Lifetime): Promise<PolicyRecord> {
  const id = newPolicyId()
  let claim: PolicyClaim | undefined
  const proof = await signed((at) => {
    claim = { type: 'hark.policy', id, rule, created_at: at, expires_at: expiry(lifetime, at) }
    return policyText(claim)
  })
  return (await api<{ policy: PolicyRecord }>('POST', '/v1/app/policies', { claim, proof })).policy
}

/** Signs the revocation of `policy` (one passkey prompt) and sends it. */
export async function revokePolicy(policy: PolicyRecord): Promise<PolicyRecord> {
  let claim: RevocationClaim | undefined
  const proof = await signed((at) => {
    claim = { type: 'hark.policy.revoke', policy_id: policy.id, revoked_at: at }
    return policyText(claim)
  })
  return (
    await api<{ policy: PolicyRecord }>(
      'POST',
      `/v1/app/policies/${encodeURIComponent(policy.id)}/revoke`,
      {
        claim,
        proof,
      },
    )
  ).policy
}

/** The claim of a stored policy, as signed. */
export const claimOfRecord = (p: PolicyRecord) => JSON.parse(p.claim) as PolicyClaim
