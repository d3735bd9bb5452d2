import { createHash } from 'node:crypto'
import type { Message } from '../../src/messages/schema.ts'
import { type AnswerProof, base64url, claimOf, claimText } from '../../src/shared/proof.ts'
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
