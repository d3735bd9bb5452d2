import { createHash } from 'node:crypto'
import type { ChannelRow } from '../../channels/store.ts'
import type { Ctx } from '../../core/context.ts'
import { fail, HarkError } from '../../core/errors.ts'
import { batchText } from '../../shared/batch.ts'
import { type AnswerProof, claimOf, claimText } from '../../shared/proof.ts'
import type { MessageBody } from '../schema.ts'
import type { MessageRow } from '../store.ts'
import { validateAnswer } from './answers.ts'
import type { Answerer } from './events.ts'
import { checkSignedText } from './proof.ts'
import { type AskResult, askResult, findQuestion, settle } from './service.ts'

/**
 * Batch answers (issue 29 item 5): the person answers several questions of their agents with
 * one passkey gesture. The app signs one assertion over the list of the items' claim hashes
 * (src/shared/batch.ts); the server rebuilds each claim from the question it holds and the
 * answer sent, checks the one assertion over the list, and stores with each answer the proof
 * and the whole list, so each agent can check its own item with its own claim. All or nothing:
 * an item that is not the person's, not open, takes no proof or has a bad answer refuses the
 * whole batch, naming the item, and nothing is written.
 */
export interface BatchItem {
  id: string
  answer: unknown
}

interface Checked {
  channel: ChannelRow
  row: MessageRow
  value: unknown
  claimHash: string
}

const sha256hex = (text: string) => createHash('sha256').update(text).digest('hex')

/** Runs `check` for item `index`: a refusal names the item's field (`items[2].answer.decision`). */
async function forItem<T>(index: number, check: () => Promise<T> | T): Promise<T> {
  try {
    return await check()
  } catch (error) {
    if (!(error instanceof HarkError)) throw error
    const field = error.field ?? 'id'
    const message = error.field ? error.message.slice(error.field.length + 2) : error.message
    throw new HarkError(error.status, message, `items[${index}].${field}`, error.headers)
  }
}

/** The open question `id` of this person, taking proof, with its answer checked. */
async function checkItem(
  ctx: Ctx,
  userId: string,
  item: BatchItem,
  answeredAt: number,
): Promise<Checked> {
  const found = await ctx.store.messages.byId(item.id)
  const channel = found ? await ctx.store.channels.byId(found.channel_id) : undefined
  // Another person's question reads as an unknown id: a 404 must not tell that it exists.
  if (!channel || channel.user_id !== userId) throw fail.notFound('question')
  const row = await findQuestion(ctx, channel, item.id)
  if (row.ask_status !== 'open') throw fail.conflict(`the question is already ${row.ask_status}`)
  if (row.ask_request_hash === null) {
    throw fail.invalid('id', 'this question takes no signed answer; answer it on its own')
  }
  const body = JSON.parse(row.body as string) as MessageBody
  const value = validateAnswer(body, item.answer)
  const approval = body.blocks?.some((b) => b.type === 'approval') === true
  const ids = { channel_id: channel.id, message_id: row.id, request_hash: row.ask_request_hash }
  const claimHash = sha256hex(claimText(claimOf(ids, value, answeredAt, approval)))
  return { channel, row, value, claimHash }
}

export async function answerBatch(
  ctx: Ctx,
  userId: string,
  items: readonly BatchItem[],
  answerer: Answerer & { proof: AnswerProof },
): Promise<AskResult[]> {
  const seen = new Set<string>()
  const checked: Checked[] = []
  for (const [index, item] of items.entries()) {
    if (seen.has(item.id)) throw fail.invalid(`items[${index}].id`, 'repeats an earlier item')
    seen.add(item.id)
    checked.push(
      await forItem(index, () => checkItem(ctx, userId, item, answerer.proof.answered_at)),
    )
  }
  const hashes = checked.map((c) => c.claimHash)
  const askedLast = Math.max(...checked.map((c) => c.row.created_at))
  await checkSignedText(ctx, userId, batchText(hashes), answerer.proof, askedLast)
  const stored: Answerer = { ...answerer, proof: { ...answerer.proof, batch: { items: hashes } } }
  // One unit: each settlement joins it, so one that lost a race (answered, cancelled or expired
  // meanwhile) rolls every other back with it.
  const rows = await ctx.writes.apply(async () => {
    const out: MessageRow[] = []
    for (const [index, c] of checked.entries()) {
      out.push(await forItem(index, () => settle(ctx, c.row, 'answered', c.value, stored)))
    }
    return out
  })
  return rows.map(askResult)
}
