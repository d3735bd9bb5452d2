import { createHash } from 'node:crypto'
import { verifyAssertion } from '../../access/passkeys/ceremony.ts'
import type { ChannelRow } from '../../channels/store.ts'
import type { Ctx } from '../../core/context.ts'
import { fail, HarkError } from '../../core/errors.ts'
import {
  type AnswerProof,
  base64url,
  claimOf,
  claimText,
  type DecisionClaim,
} from '../../shared/proof.ts'
import type { MessageRow } from '../store.ts'

/**
 * The server's own check of a signed answer before storing it: the passkey is the person's, the
 * assertion's challenge is the claim of exactly this answer, and the signature, origin, rp id
 * and user verification hold. It refuses garbage early and moves the passkey's counter; the
 * agent does not rely on it and checks the proof again with the keys it pinned.
 */
export const PROOF_SKEW_MS = 5 * 60_000

export async function checkProof(
  ctx: Ctx,
  channel: ChannelRow,
  row: MessageRow,
  answer: unknown,
  proof: AnswerProof,
): Promise<void> {
  if (row.ask_request_hash === null) throw fail.invalid('proof', 'this question takes no proof')
  const approval = JSON.parse(row.body as string).blocks?.some(
    (b: { type?: string }) => b.type === 'approval',
  )
  const ids = { channel_id: channel.id, message_id: row.id, request_hash: row.ask_request_hash }
  const claim = claimOf(ids, answer, proof.answered_at, approval === true)
  await checkClaim(ctx, channel.user_id, claim, proof, row.created_at)
}

/**
 * The check itself, for any signed answer (a question's, a secret request's): a passkey of
 * `userId`, signed near the server's clock and not before `askedAt`, over exactly `claim`.
 */
export async function checkClaim(
  ctx: Ctx,
  userId: string,
  claim: DecisionClaim,
  proof: AnswerProof,
  askedAt: number,
): Promise<void> {
  await checkSignedText(ctx, userId, claimText(claim), proof, askedAt)
}

/**
 * The same check over any signed text (an answer's claim, a policy or its revocation:
 * src/shared/policy.ts), with `proof.answered_at` the time the text says it was signed.
 */
export async function checkSignedText(
  ctx: Ctx,
  userId: string,
  text: string,
  proof: AnswerProof,
  askedAt: number,
): Promise<void> {
  const passkey = await ctx.store.passkeys.byId(proof.credential_id)
  if (!passkey || passkey.user_id !== userId) {
    throw fail.invalid('proof.credential_id', "is not a passkey of this channel's person")
  }
  const now = ctx.clock.now()
  if (Math.abs(proof.answered_at - now) > PROOF_SKEW_MS) {
    throw fail.invalid('proof.answered_at', 'is more than 5 minutes from the server clock')
  }
  if (proof.answered_at < askedAt) {
    throw fail.invalid('proof.answered_at', 'is before the question was asked')
  }
  const challenge = base64url.encode(createHash('sha256').update(text).digest())
  let use: Awaited<ReturnType<typeof verifyAssertion>>
  try {
    use = await verifyAssertion(
      ctx,
      challenge,
      {
        id: proof.credential_id,
        rawId: proof.credential_id,
        type: 'public-key',
        response: {
          authenticatorData: proof.authenticator_data,
          clientDataJSON: proof.client_data_json,
          signature: proof.signature,
          ...(proof.user_handle ? { userHandle: proof.user_handle } : {}),
        },
        clientExtensionResults: {},
      },
      passkey,
    )
  } catch (error) {
    const why =
      error instanceof HarkError
        ? error.message.replace(/^passkey login failed: /, '')
        : String(error)
    throw fail.invalid('proof', `does not verify for this answer: ${why}`)
  }
  const recorded = await ctx.writes.apply(
    async (tx) =>
      await tx.store.passkeys.recordUse(passkey.id, use.counter, use.deviceType, use.backedUp, now),
  )
  if (!recorded) throw fail.invalid('proof', 'the passkey signature counter went back')
}
