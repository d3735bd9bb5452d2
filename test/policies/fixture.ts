import { expect } from 'bun:test'
import type { PolicyClaim, PolicyRule, RevocationClaim } from '../../src/shared/policy.ts'
import { policyText } from '../../src/shared/policy.ts'
import type { AnswerProof } from '../../src/shared/proof.ts'
import { signText } from '../asks/signing.ts'
import { SoftwareAuthenticator, type Tamper } from '../passkeys/authenticator.ts'
import type { FreshServer } from '../passkeys/fixture.ts'

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

/** A rule as the server hands it to an agent (`GET /v1/policies`). */
export interface ServedPolicy {
  id: string
  claim: string
  proof: AnswerProof | null
}

/** A rule the person signed and added. */
export interface SignedPolicy {
  claim: PolicyClaim
  proof: AnswerProof
}

/** The person signs `rule` in the app and adds it (`POST /v1/app/policies`). */
export async function addPolicy(
  // The shape of harnesses/signed.ts's SignedHark, not an import of it: that module's imports
  // would make every test of this fixture need the agent CLIs (scripts/test-parts.ts).
  h: { s: FreshServer; owner: { authenticator: SoftwareAuthenticator; cookie: string } },
  rule: PolicyRule,
  more: Partial<PolicyClaim> = {},
): Promise<SignedPolicy> {
  const claim = claimOf(rule, more)
  const proof = await signPolicy(h.owner.authenticator, claim, { rpId: h.s.rpId })
  const r = await h.s.request('POST', '/v1/app/policies', {
    cookie: h.owner.cookie,
    json: { claim, proof },
  })
  expect(r.status).toBe(200)
  return { claim, proof }
}

/**
 * What a malicious server (or a proxy before the agent) may serve in place of the person's
 * rules, all allowing `command` on `channelId`, each beside the reason the agent must give for
 * ignoring it: a narrow rule's signature on a widened one, a rule signed for another channel,
 * one signed but long expired, one signed by a passkey the agent never pinned, an unsigned one,
 * and the person's signature of an answer (`answerProof`) replayed as a rule's.
 */
export async function forgedPolicies(options: {
  /** The person's passkey, which the agent pinned. */
  authenticator: SoftwareAuthenticator
  rpId: string
  origin: string
  channelId: string
  command: string
  /** A real rule of the person's, for a narrower command on `channelId`. */
  narrow: SignedPolicy
  /** A real rule of the person's, for `command` on another channel. */
  moved: SignedPolicy
  answerProof: AnswerProof
}): Promise<{ served: ServedPolicy[]; reasons: (readonly [string, string])[] }> {
  const { authenticator, rpId, channelId, command, narrow, moved, answerProof } = options
  const wanted = allowPrefix(channelId, command)
  const old = claimOf(wanted, {
    created_at: Date.now() - 7200_000,
    expires_at: Date.now() - 3600_000,
  })
  const stranger = new SoftwareAuthenticator(options.origin)
  await stranger.register({
    challenge: 'c2VydmVy',
    rp: { id: rpId, name: 'Hark' },
    user: { id: 'c2VydmVy', name: 'server', displayName: 'server' },
  })
  const strange = claimOf(wanted)
  const unsigned = claimOf(wanted)
  const widened = { ...narrow.claim, rule: wanted }
  const replayed = claimOf(wanted, { created_at: answerProof.answered_at })
  const served = (claim: PolicyClaim, proof: AnswerProof | null): ServedPolicy => ({
    id: claim.id,
    claim: policyText(claim),
    proof,
  })
  const notOver = 'the signature is not over this rule (changed or widened)'
  return {
    served: [
      served(widened, narrow.proof),
      served(moved.claim, moved.proof),
      served(old, await signPolicy(authenticator, old, { rpId })),
      served(strange, await signPolicy(stranger, strange, { rpId })),
      served(unsigned, null),
      served(replayed, answerProof),
    ],
    reasons: [
      [widened.id, notOver],
      [moved.claim.id, 'it is for another channel'],
      [old.id, 'it has expired'],
      [strange.id, 'signed by a passkey this agent has not pinned'],
      [unsigned.id, 'it is not signed'],
      [replayed.id, notOver],
    ],
  }
}
