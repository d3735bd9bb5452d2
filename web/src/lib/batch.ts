import { toolName } from '../../../src/shared/approval-text.ts'
import { batchText } from '../../../src/shared/batch.ts'
import { claimOf, claimText } from '../../../src/shared/proof.ts'
import * as client from './client.ts'
import { assert, checkRequest, hex, myPasskeys, NotSigned, sha256, takesProof } from './signing.ts'
import type { Message } from './types.ts'

/**
 * Batch answers (issue 29 item 5), the app's part: several waiting approvals allowed with one
 * passkey gesture. Each approval's claim is built as for one answer (src/shared/proof.ts), all
 * dated with the one moment of signing; the assertion's challenge is SHA-256 of the list of
 * their hashes (src/shared/batch.ts), in the order shown. Every card's request hash is computed
 * again from what the list shows before anything is signed, as for one answer.
 */

const approvalBlock = (m: Message) => m.body.blocks?.find((b) => b.type === 'approval')

/**
 * An approval that may be allowed with others: it takes a signed answer, and it is not a
 * destructive action (those are decided on their own card, as their notification is their own).
 */
export const batchable = (m: Message): boolean => {
  const block = approvalBlock(m)
  return block !== undefined && block.danger !== true && takesProof(m)
}

/** What makes approvals "similar": the same tool (every Bash command, every file edit...). */
export const similarKey = (m: Message): string => toolName(String(approvalBlock(m)?.tool ?? ''))

const ALLOW = { decision: 'allow' as const }

/**
 * Signs `messages`' allows with one passkey prompt and sends them together. Nothing is sent
 * when any card's request changed on the server, or the prompt fails (`NotSigned`).
 */
export async function allowTogether(messages: Message[]): Promise<Message[]> {
  for (const m of messages) {
    if ((await checkRequest(m)) !== 'ok') {
      throw new NotSigned('changed', 'One of these requests was changed on the server; not signed.')
    }
  }
  const passkeys = await myPasskeys()
  if (passkeys.length === 0) {
    throw new NotSigned('unsupported', 'Allowing several at once needs a passkey.')
  }
  const hashesAt = async (answeredAt: number) =>
    await Promise.all(
      messages.map(async (m) => {
        const ids = {
          channel_id: m.channel_id,
          message_id: m.id,
          request_hash: m.ask?.request_hash as string,
        }
        return hex(await sha256(claimText(claimOf(ids, ALLOW, answeredAt, true))))
      }),
    )
  const asked = Math.max(...messages.map((m) => m.created_at))
  const proof = await assert(async (at) => batchText(await hashesAt(at)), asked, passkeys)
  return await client.answerBatch(
    messages.map((m) => ({ id: m.id, answer: ALLOW })),
    proof,
  )
}
