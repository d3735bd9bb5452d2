import { describe, expect, test } from 'bun:test'
import { buildApp, handlerOf } from '../../src/server/app.ts'
import { closeContext } from '../../src/server/context.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * `POST /v1/messages` on Postgres, many at once for one person, with and without an
 * `Idempotency-Key` (issue 32 item 6): the sends share pipelined batches (db/pg/batch-tx.ts),
 * the keyed ones with the send as a nested unit inside the key's, without a savepoint. A send
 * the route refuses inside its unit fails alone; every key keeps one message and one answer.
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('keyed sends on Postgres, batched', () => {
  const cluster = useCluster()

  test('POST /v1/messages ×48 at once: each key one message, a retry its answer, a refused send alone', async () => {
    const url = await cluster.database('keyed_sends')
    const made = await provisionOwner(url)
    const ctx = await pgInstance(url, { writeLimit: 0 })
    try {
      const handle = handlerOf(ctx, buildApp(ctx))
      const send = (body: unknown, key?: string) =>
        handle(
          new Request('http://hark.test/v1/messages', {
            method: 'POST',
            headers: {
              authorization: `Bearer ${made.token}`,
              'content-type': 'application/json',
              ...(key ? { 'idempotency-key': key } : {}),
            },
            body: JSON.stringify(body),
          }),
        ).then(async (r) => ({
          status: r.status,
          json: (await r.json()) as { message: { id: string } },
        }))
      const good = (i: number) => ({ body: { text: `send ${i}` } })
      // A file the channel does not have: refused by the send's own checks, inside the key's unit.
      const refused = { body: { blocks: [{ type: 'image', file_id: 'fil_nope' }] } }
      const calls = [
        ...Array.from({ length: 16 }, (_, i) => send(good(i), `key-${i}`)),
        ...Array.from({ length: 16 }, (_, i) => send(good(100 + i))),
        ...Array.from({ length: 8 }, (_, i) => send(refused, `bad-${i}`)),
        ...Array.from({ length: 8 }, (_, i) => send(good(200 + i), `key2-${i}`)),
      ]
      const answers = await Promise.all(calls)
      expect(answers.slice(0, 32).map((a) => a.status)).toEqual(Array(32).fill(200))
      expect(answers.slice(32, 40).map((a) => a.status)).toEqual(Array(8).fill(400))
      expect(answers.slice(40).map((a) => a.status)).toEqual(Array(8).fill(200))
      // Retried: the first answer again, no second message.
      const again = await Promise.all(
        Array.from({ length: 16 }, (_, i) => send(good(i), `key-${i}`)),
      )
      for (let i = 0; i < 16; i++) {
        expect(again[i]?.json.message.id).toBe(answers[i]?.json.message.id)
      }
      // They were batched: fewer transactions than units.
      const stats = ctx.writes.stats()
      expect(stats.flushes).toBeLessThan(stats.writes)
      const rows = await ctx.store.messages.feed(made.channel.id, 0, 1_000)
      expect(rows.length).toBe(40)
      expect(new Set(rows.map((r) => r.id)).size).toBe(40)
      // Numbered without a gap: the refused sends took no number.
      const seqs = rows.map((r) => r.seq).sort((x, y) => x - y)
      expect(seqs).toEqual(seqs.map((_, i) => (seqs[0] as number) + i))
    } finally {
      await closeContext(ctx)
    }
  })
})
