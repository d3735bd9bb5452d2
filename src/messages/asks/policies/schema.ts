import { t } from 'elysia'
import { AnswerProof } from '../../schema.ts'

/** The TypeBox of a policy's claim (src/shared/policy.ts), checked before anything is stored. */
const text = (max: number) => t.String({ minLength: 1, maxLength: max })
const Channel = text(64)

export const PolicyMatch = t.Union([
  t.Object({ kind: t.Literal('exact'), command: text(4000) }, { additionalProperties: false }),
  t.Object({ kind: t.Literal('prefix'), command: text(1000) }, { additionalProperties: false }),
  t.Object({ kind: t.Literal('path'), glob: text(1000) }, { additionalProperties: false }),
  t.Object({ kind: t.Literal('host'), host: text(253) }, { additionalProperties: false }),
  t.Object({ kind: t.Literal('tool') }, { additionalProperties: false }),
])

export const PolicyWhere = t.Union([
  t.Object({ kind: t.Literal('channel'), channel_id: Channel }, { additionalProperties: false }),
  t.Object(
    { kind: t.Literal('cwd'), channel_id: Channel, cwd: text(1000) },
    { additionalProperties: false },
  ),
  t.Object({ kind: t.Literal('all') }, { additionalProperties: false }),
])

export const PolicyClaim = t.Object(
  {
    type: t.Literal('hark.policy'),
    id: t.String({ pattern: '^pol_[A-Za-z0-9_-]{8,64}$' }),
    rule: t.Object(
      {
        effect: t.Union([t.Literal('allow'), t.Literal('deny')]),
        tool: text(200),
        match: PolicyMatch,
        where: PolicyWhere,
        message: t.Optional(t.String({ maxLength: 1000 })),
      },
      { additionalProperties: false },
    ),
    created_at: t.Integer({ minimum: 0 }),
    expires_at: t.Integer({ minimum: 0 }),
  },
  { $id: 'PolicyClaim', additionalProperties: false },
)

export const RevocationClaim = t.Object(
  {
    type: t.Literal('hark.policy.revoke'),
    policy_id: t.String({ minLength: 1, maxLength: 80 }),
    revoked_at: t.Integer({ minimum: 0 }),
  },
  { $id: 'RevocationClaim', additionalProperties: false },
)

export const CreatePolicyRequest = t.Object(
  { claim: PolicyClaim, proof: AnswerProof },
  { additionalProperties: false },
)

export const RevokePolicyRequest = t.Object(
  { claim: RevocationClaim, proof: AnswerProof },
  { additionalProperties: false },
)

export const UseRequest = t.Object(
  { summary: t.String({ maxLength: 300 }) },
  { additionalProperties: false },
)

/** A policy as the person's app and the agent read it: the signed parts exactly as stored. */
export const PolicyRecord = t.Object(
  {
    id: t.String(),
    channel_id: t.Union([t.String(), t.Null()]),
    claim: t.String({ description: 'the signed claim, canonical JSON, byte for byte' }),
    proof: AnswerProof,
    created_at: t.Integer(),
    expires_at: t.Integer(),
    revocation: t.Optional(t.Object({ claim: t.String(), proof: AnswerProof })),
    revoked_at: t.Optional(t.Integer()),
    uses: t.Integer(),
    last_used_at: t.Optional(t.Integer()),
  },
  { $id: 'PolicyRecord' },
)

export const PolicyResponse = t.Object({ policy: PolicyRecord })
export const PoliciesResponse = t.Object({ policies: t.Array(PolicyRecord) })
