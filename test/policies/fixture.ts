import type { PolicyClaim, PolicyRule, RevocationClaim } from '../../src/shared/policy.ts'
import { policyText } from '../../src/shared/policy.ts'
import type { AnswerProof } from '../../src/shared/proof.ts'
import { signText } from '../asks/signing.ts'
import type { SoftwareAuthenticator, Tamper } from '../passkeys/authenticator.ts'

/**
 * Policies as the app makes them (src/shared/policy.ts): a claim, its canonical text signed by
 * the person's passkey, dated by the claim. `over` signs another claim than the one returned,
 * for the forgery tests.
 */
let n = 0
export const policyId = () =>
  `pol_test${Date.now().toString(36)}${(n++).toString().padStart(4, '0')}`

export function claimOf(rule: PolicyRule, more: Partial<PolicyClaim> = {}): PolicyClaim {
  const created = more.created_at ?? Date.now()
  return {
    type: 'hark.policy',
    id: policyId(),
    rule,
    created_at: created,
    expires_at: created + 3600_000,
    ...more,
  }
}

export const signPolicy = (
  authenticator: SoftwareAuthenticator,
  claim: PolicyClaim | RevocationClaim,
  options: { rpId?: string; tamper?: Tamper } = {},
): Promise<AnswerProof> =>
  signText(
    authenticator,
    policyText(claim),
    claim.type === 'hark.policy' ? claim.created_at : claim.revoked_at,
    options,
  )

export const allowPrefix = (channelId: string, command: string): PolicyRule => ({
  effect: 'allow',
  tool: 'Bash',
  match: { kind: 'prefix', command },
  where: { kind: 'channel', channel_id: channelId },
})

export const revocation = (policyId: string, at = Date.now()): RevocationClaim => ({
  type: 'hark.policy.revoke',
  policy_id: policyId,
  revoked_at: at,
})
