import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { chainHash, channelHistory } from '../../src/messages/asks/audit/service.ts'
import { GENESIS_HASH } from '../../src/messages/asks/audit/store.ts'
import { answerAsk } from '../../src/messages/asks/service.ts'
import { deleteMessage, editMessage, sendMessage } from '../../src/messages/service.ts'
import { closeContext } from '../../src/server/context.ts'
import { failsWith } from '../harness.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * Issue 31, item 4 on Postgres: an approval's body stays as sent (409), its decision records
 * what the person was shown, and deleting it appends to the chain in the deletion's own
 * transaction (under the chain's lock), so the history keeps every line. SQLite's twin of
 * these: test/asks/approval-record.test.ts, over HTTP.
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('an approval on Postgres', () => {
  const cluster = useCluster()

  test('fixed once sent; deleting it, open or answered, is recorded; the chain is whole', async () => {
    const url = await cluster.database('approval_record')
    const sql = new SQL(url, { max: 1 })
    const made = await provisionOwner(url)
    const ctx = await pgInstance(url)
    try {
      const ask = async (command: string) =>
        await sendMessage(ctx, made.channel, 'agent', {
          body: {
            title: 'Run it',
            text: 'As planned',
            blocks: [{ type: 'approval', id: 'a', tool: 'Bash', input: { command } }],
          },
        })
      const answered = await ask('make deploy')
      await failsWith(editMessage(ctx, made.channel, answered.id, { title: 'Approved' }), 409)
      await answerAsk(ctx, made.channel, answered.id, { decision: 'allow' })
      await failsWith(editMessage(ctx, made.channel, answered.id, { text: 'Approved' }), 409)
      await deleteMessage(ctx, made.channel, answered.id)
      const open = await ask('make release')
      await deleteMessage(ctx, made.channel, open.id)

      const lines = await channelHistory(ctx, made.channel.id, Number.MAX_SAFE_INTEGER, 30)
      expect(lines.map((l) => [l.message_id, l.status, l.was, l.title, l.summary])).toEqual([
        [open.id, 'deleted', 'open', 'Run it', 'make release'],
        [answered.id, 'deleted', 'answered', 'Run it', 'make deploy'],
        [answered.id, 'answered', undefined, 'Run it', 'make deploy'],
      ])
      const rows = await sql`SELECT entry, prev_hash, hash FROM audit_log ORDER BY seq`
      let prev = GENESIS_HASH
      for (const r of rows) {
        expect(r.prev_hash).toBe(prev)
        expect(r.hash).toBe(chainHash(prev, r.entry))
        expect(JSON.parse(r.entry).text).toBe('As planned')
        prev = r.hash
      }
    } finally {
      await closeContext(ctx)
      await sql.close()
    }
  })
})
