import { createHash, createPublicKey, verify } from 'node:crypto'
import { BATCH_MAX, batchText, isItemHash } from '../shared/batch.ts'
import { type AnswerProof, base64url, claimOf, claimText } from '../shared/proof.ts'

/**
 * The agent's own check of a signed answer (PRODUCT.md "Trusted answers"), with nothing from the
 * server trusted: the keys, relying party id and origin are the ones pinned when the agent was
 * connected, and the claim is rebuilt from the agent's own request (its channel, the question it
 * asked, the request hash it computed itself) and the answer it is about to act on. A server
 * that rewrites the answer, moves a proof to another question or channel, or makes one up cannot
 * get past this; only the person's passkey can.
 */
export interface PinnedKey {
  id: string
  name: string
  alg: number
  jwk: JsonWebKey
  created_at: number
}

export interface PinnedApprovers {
  rp_id: string
  origin: string
  keys: PinnedKey[]
  /** Highest signature counter seen per credential: it must only go up (0: none kept). */
  counters?: Record<string, number>
  /**
   * Batches this agent already took an item of (SHA-256 hex of the batch text → when, ms): a
   * second item of the same batch carries the same counter, which is then not a step back.
   */
  batches?: Record<string, number>
}

export interface Expected {
  channel_id: string
  message_id: string
  /** Computed by the agent from what it asked, never read from the server. */
  request_hash: string
  /** The answer the agent is about to act on. */
  answer: unknown
  approval: boolean
  /** When the agent asked (its clock, ms): a proof made before that is refused. */
  asked_at: number
  now: number
}

export type ProofCheck =
  | { ok: true; credential_id: string; counter: number; batch?: string }
  | { ok: false; reason: string }

/** Clock difference allowed between the person's device and the agent's machine. */
export const CLOCK_SKEW_MS = 5 * 60_000

const FLAG_UP = 0x01
const FLAG_UV = 0x04

const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()
const no = (reason: string): ProofCheck => ({ ok: false, reason })

function isProof(value: unknown): value is AnswerProof {
  if (typeof value !== 'object' || value === null) return false
  const p = value as Record<string, unknown>
  return (
    ['credential_id', 'authenticator_data', 'client_data_json', 'signature'].every(
      (k) => typeof p[k] === 'string',
    ) && Number.isSafeInteger(p.answered_at)
  )
}

function verifySignature(key: PinnedKey, data: Buffer, signature: Uint8Array): boolean {
  try {
    const publicKey = createPublicKey({ key: key.jwk, format: 'jwk' })
    // ES256 signatures are DER, as WebAuthn sends them; EdDSA takes no digest.
    if (key.alg === -8) return verify(null, data, publicKey, signature)
    if (key.alg === -7 || key.alg === -257) return verify('sha256', data, publicKey, signature)
    return false
  } catch {
    return false
  }
}

export function checkAnswerProof(
  proof: unknown,
  expected: Expected,
  pinned: PinnedApprovers | undefined,
): ProofCheck {
  if (proof === undefined || proof === null) return no('the answer is not signed')
  if (!isProof(proof)) {
    return checkAssertion(proof, '', pinned)
  }
  const claim = claimOf(
    {
      channel_id: expected.channel_id,
      message_id: expected.message_id,
      request_hash: expected.request_hash,
    },
    expected.answer,
    proof.answered_at,
    expected.approval,
  )
  const signed = signedTextOf(claimText(claim), proof.batch)
  if (typeof signed !== 'string') return signed
  const check = checkAssertion(proof, signed, pinned)
  if (!check.ok) return check
  const last = pinned?.counters?.[check.credential_id] ?? 0
  // A batch's items share one assertion, so one counter: a second item of a batch this agent
  // already took an item of (the same signed list) is not a step back.
  const batch = proof.batch === undefined ? undefined : sha256(signed).toString('hex')
  const sameBatch =
    batch !== undefined && check.counter === last && pinned?.batches?.[batch] !== undefined
  if ((check.counter !== 0 || last !== 0) && check.counter <= last && !sameBatch) {
    return no('the signature counter went back (a copied passkey, or a replayed proof)')
  }
  if (proof.answered_at < expected.asked_at - CLOCK_SKEW_MS) {
    return no('signed before the question was asked')
  }
  if (proof.answered_at > expected.now + CLOCK_SKEW_MS) return no('signed in the future')
  return batch === undefined ? check : { ...check, batch }
}

/**
 * What the assertion must be over: the claim itself, or, for a batch-signed answer, the list
 * of claim hashes that holds this claim's hash exactly once (src/shared/batch.ts).
 */
function signedTextOf(claim: string, batch: unknown): string | ProofCheck {
  if (batch === undefined) return claim
  const items = (batch as { items?: unknown } | null)?.items
  if (
    !Array.isArray(items) ||
    items.length === 0 ||
    items.length > BATCH_MAX ||
    !items.every(isItemHash)
  ) {
    return no('the batch is malformed')
  }
  const mine = sha256(claim).toString('hex')
  if (items.filter((h) => h === mine).length !== 1) {
    return no('this answer to this question is not in the signed batch')
  }
  return batchText(items)
}

/**
 * The signature alone: an assertion by a pinned key, for the pinned site and origin, with the
 * person verified, whose challenge is SHA-256 of `text`. For an answer (above) and for a policy
 * or its revocation (src/agent/policy.ts), which are long-lived and so take no counter check.
 */
export function checkAssertion(
  proof: unknown,
  text: string,
  pinned: PinnedApprovers | undefined,
): ProofCheck {
  if (proof === undefined || proof === null) return no('the answer is not signed')
  if (!pinned || pinned.keys.length === 0) {
    return no('no passkey is pinned for this connection (run "hark keys refresh")')
  }
  if (!isProof(proof)) return no('the proof is malformed')
  const key = pinned.keys.find((k) => k.id === proof.credential_id)
  if (!key) return no('signed by a passkey this agent has not pinned')
  let clientData: { type?: unknown; challenge?: unknown; origin?: unknown; crossOrigin?: unknown }
  let authData: Uint8Array
  let clientDataBytes: Uint8Array
  try {
    clientDataBytes = base64url.decode(proof.client_data_json)
    clientData = JSON.parse(new TextDecoder().decode(clientDataBytes))
    authData = base64url.decode(proof.authenticator_data)
  } catch {
    return no('the proof is malformed')
  }
  if (clientData.type !== 'webauthn.get') return no('the proof is not an assertion')
  if (clientData.challenge !== base64url.encode(sha256(text))) {
    return no('the signature is not over this answer to this question')
  }
  if (clientData.origin !== pinned.origin) return no(`signed for ${String(clientData.origin)}`)
  if (clientData.crossOrigin === true) return no('signed in a cross-origin frame')
  if (authData.length < 37) return no('the proof is malformed')
  if (!sha256(pinned.rp_id).equals(authData.subarray(0, 32))) return no('signed for another site')
  const flags = authData[32] as number
  if (!(flags & FLAG_UP) || !(flags & FLAG_UV)) return no('the person was not verified')
  const data = Buffer.concat([authData, sha256(clientDataBytes)])
  if (!verifySignature(key, data, base64url.decode(proof.signature))) {
    return no('the signature does not verify')
  }
  const counter = new DataView(authData.buffer, authData.byteOffset + 33, 4).getUint32(0)
  return { ok: true, credential_id: key.id, counter }
}
