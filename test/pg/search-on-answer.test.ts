import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { searchMessages } from '../../src/messages/search/service.ts'
import { sendMessage } from '../../src/messages/service.ts'
import { closeContext } from '../../src/server/context.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * A sent message is searchable as soon as its send is answered, on Postgres (issue 32): the
 * guarantee SQLite keeps by indexing each batch just before its COMMIT (migration 018,
 * test/search/indexed-at-commit.test.ts), Postgres keeps by writing the search row in the
 * insert's own statement (pg migration 20; its trigger of 012 for other bodies). Concurrent sends of one person share a transaction here too
 * (one batch per lock hold), so each is looked for the moment its own send returns, by the
 * service and by another connection (what has committed).
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('search on Postgres', () => {
  const cluster = useCluster()

  test('sendMessage: 32 concurrent sends of one person, each found as soon as it returns', async () => {
    const url = await cluster.database('search_on_answer')
    const made = await provisionOwner(url)
    const ctx = await pgInstance(url)
    const other = new SQL(url, { max: 1 })
    try {
      const found = await Promise.all(
        Array.from({ length: 32 }, async (_, i) => {
          const word = `zanzibar${i}x`
          const row = await sendMessage(ctx, made.channel, 'agent', {
            body: { title: `run ${i}`, text: `deploy ${word} ok` },
          })
          const committed = (await other`
            SELECT m.id FROM message_search s JOIN messages m ON m.rid = s.rid
            WHERE s.document @@ plainto_tsquery('simple', ${word})`) as { id: string }[]
          const hits = await searchMessages(ctx, made.user.id, { q: word })
          return { id: row.id, committed: committed.map((r) => r.id), hits }
        }),
      )
      for (const { id, committed, hits } of found) {
        expect(committed).toEqual([id])
        expect(hits.results.map((r) => r.message_id)).toEqual([id])
      }
    } finally {
      await other.close()
      await closeContext(ctx)
    }
  }, 60_000)
})
