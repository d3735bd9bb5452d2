import { createHash } from 'node:crypto'
import type { SecretRecord } from '../../src/messages/asks/secrets/service.ts'
import type { Message } from '../../src/messages/schema.ts'
import { batchText } from '../../src/shared/batch.ts'
import { secretRequest } from '../../src/shared/canonical.ts'
import {
  type AnswerProof,
  base64url,
  claimOf,
  claimText,
  type DecisionClaim,
  secretDecision,
} from '../../src/shared/proof.ts'
import type { SoftwareAuthenticator, Tamper } from '../passkeys/authenticator.ts'
import { RP_ID } from '../passkeys/fixture.ts'

/**
 * Signing an answer as the app does: the claim of exactly this answer (src/shared/proof.ts),
 * its SHA-256 as the WebAuthn challenge, one assertion by the person's passkey. `over` signs a
 * different answer or question than the one sent, for the forgery tests.
 */
export async function signAnswer(
  authenticator: SoftwareAuthenticator,
  question: Message,
  answer: unknown,
  options: { answeredAt?: number; over?: Partial<{ answer: unknown; question: Message }> } & {
    tamper?: Tamper
    rpId?: string
  } = {},
): Promise<AnswerProof> {
  const q = options.over?.question ?? question
  const signedAnswer = options.over && 'answer' in options.over ? options.over.answer : answer
  const answeredAt = options.answeredAt ?? Date.now()
  const approval = q.body.blocks?.some((b) => b.type === 'approval') === true
  const claim = claimOf(
    { channel_id: q.channel_id, message_id: q.id, request_hash: q.ask?.request_hash as string },
    signedAnswer,
    answeredAt,
    approval,
  )
  return await assertClaim(authenticator, claim, options)
}

/** The person's passkey over a secret's ciphertext, as the app signs it (web signing.ts). */
export async function signSecret(
  authenticator: SoftwareAuthenticator,
  record: SecretRecord,
  ciphertext: string,
  rpId?: string,
): Promise<AnswerProof> {
  const hex = (text: string) => createHash('sha256').update(text).digest('hex')
  const claim: DecisionClaim = {
    channel_id: record.channel_id,
    message_id: record.id,
    request_hash: hex(secretRequest(record.name, record.public_key)),
    decision: secretDecision(hex(ciphertext)),
    answered_at: Date.now(),
  }
  return await assertClaim(authenticator, claim, { rpId })
}

async function assertClaim(
  authenticator: SoftwareAuthenticator,
  claim: DecisionClaim,
  options: { tamper?: Tamper; rpId?: string },
): Promise<AnswerProof> {
  const answeredAt = claim.answered_at
  const challenge = base64url.encode(createHash('sha256').update(claimText(claim)).digest())
  const assertion = await authenticator.login(
    { challenge, rpId: options.rpId ?? RP_ID },
    options.tamper,
  )
  return {
    credential_id: assertion.id,
    authenticator_data: assertion.response.authenticatorData,
    client_data_json: assertion.response.clientDataJSON,
    signature: assertion.response.signature,
    user_handle: assertion.response.userHandle,
    answered_at: answeredAt,
  }
}

/** The person's passkey over any signed text (a policy, a revocation), dated `signedAt`. */
export async function signText(
  authenticator: SoftwareAuthenticator,
  text: string,
  signedAt: number,
  options: { tamper?: Tamper; rpId?: string } = {},
): Promise<AnswerProof> {
  const challenge = base64url.encode(createHash('sha256').update(text).digest())
  const assertion = await authenticator.login(
    { challenge, rpId: options.rpId ?? RP_ID },
    options.tamper,
  )
  return {
    credential_id: assertion.id,
    authenticator_data: assertion.response.authenticatorData,
    client_data_json: assertion.response.clientDataJSON,
    signature: assertion.response.signature,
    user_handle: assertion.response.userHandle,
    answered_at: signedAt,
  }
}

/** An item's claim hash, as the app and the agent compute it (src/shared/batch.ts). */
export function itemHash(question: Message, answer: unknown, answeredAt: number): string {
  const approval = question.body.blocks?.some((b) => b.type === 'approval') === true
  const claim = claimOf(
    {
      channel_id: question.channel_id,
      message_id: question.id,
      request_hash: question.ask?.request_hash as string,
    },
    answer,
    answeredAt,
    approval,
  )
  return createHash('sha256').update(claimText(claim)).digest('hex')
}

/**
 * One passkey gesture over several answers, as the app signs a batch: the assertion over the
 * list of the items' claim hashes. `list` changes the list signed (an item left out, moved,
 * swapped) for the forgery tests; `hashes` is the list as signed.
 */
export async function signBatch(
  authenticator: SoftwareAuthenticator,
  items: { question: Message; answer: unknown }[],
  options: {
    answeredAt?: number
    rpId?: string
    tamper?: Tamper
    list?: (hashes: string[]) => string[]
  } = {},
): Promise<{ proof: AnswerProof; hashes: string[] }> {
  const answeredAt = options.answeredAt ?? Date.now()
  const made = items.map((i) => itemHash(i.question, i.answer, answeredAt))
  const hashes = options.list ? options.list(made) : made
  const proof = await signText(authenticator, batchText(hashes), answeredAt, options)
  return { proof, hashes }
}
