import type { StoredProof } from './api-types.gen.ts'
import { canonicalJson } from './canonical.ts'

/**
 * Signed answers (PRODUCT.md "Trusted answers"). The person's passkey signs, in the app, a
 * WebAuthn assertion whose challenge is SHA-256 of the canonical JSON of the decision's claim;
 * the agent recomputes the claim from its own request and the answer it got, and checks the
 * signature with the keys it pinned. Nothing here trusts the server: a server that rewrites the
 * answer, replays a proof from another question or channel, or drops the proof makes the check
 * fail. The app, the server and the agent build the claim with this one function.
 */
export interface DecisionClaim {
  channel_id: string
  message_id: string
  /** `ask.request_hash`: what exactly the agent asked to be allowed. */
  request_hash: string
  /** An approval's decision (`allow` / `deny`); for another question, the whole answer. */
  decision: unknown
  scope?: string
  message?: string
  /** When the person answered, in ms, from the app's clock. */
  answered_at: number
}

/**
 * The assertion stored with an answer and handed to the agent (base64url fields; `batch` when it
 * signed several answers at once, src/shared/batch.ts): the server's schema of it, as printed
 * into api-types.gen.ts, so the agent's check and the server's record cannot drift apart.
 */
export type AnswerProof = StoredProof

/** The text whose SHA-256 is the challenge: absent fields left out, keys sorted, no spaces. */
export function claimText(claim: DecisionClaim): string {
  const fields: Record<string, unknown> = {
    channel_id: claim.channel_id,
    message_id: claim.message_id,
    request_hash: claim.request_hash,
    decision: claim.decision,
    answered_at: claim.answered_at,
  }
  if (claim.scope !== undefined) fields.scope = claim.scope
  if (claim.message !== undefined) fields.message = claim.message
  return canonicalJson(fields)
}

/** The claim an answer makes: an approval's parts, or the whole answer of another question. */
export function claimOf(
  ids: { channel_id: string; message_id: string; request_hash: string },
  answer: unknown,
  answeredAt: number,
  approval: boolean,
): DecisionClaim {
  if (!approval) return { ...ids, decision: answer, answered_at: answeredAt }
  const a = (answer ?? {}) as { decision?: unknown; scope?: string; message?: string }
  const claim: DecisionClaim = { ...ids, decision: a.decision, answered_at: answeredAt }
  if (a.scope !== undefined) claim.scope = a.scope
  if (a.message !== undefined) claim.message = a.message
  return claim
}

/**
 * The `decision` of a secret request's signed answer: the SHA-256 (hex) of the ciphertext the
 * person's browser made, exactly as sent. The claim's `message_id` is the request's id and its
 * `request_hash` SHA-256 of `secretRequest(name, public_key)`: a server cannot hand the agent a
 * ciphertext of its own, sealed to the agent's public key, as the person's.
 */
export const secretDecision = (ciphertextSha256: string) => ({
  ciphertext_sha256: ciphertextSha256,
})

export const base64url = {
  encode(bytes: Uint8Array): string {
    let binary = ''
    for (const b of bytes) binary += String.fromCharCode(b)
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
  },
  decode(text: string): Uint8Array {
    const b64 = text.replace(/-/g, '+').replace(/_/g, '/')
    const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4))
    return Uint8Array.from(binary, (c) => c.charCodeAt(0))
  },
}
