import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { silentLogger } from '../../src/core/log.ts'
import { Waiters } from '../../src/core/waiters.ts'
import { asyncStores } from '../../src/db/async-stores.ts'
import { databasePath, openDatabase } from '../../src/db/database.ts'
import { GroupCommit } from '../../src/db/group-commit.ts'
import type { SearchResponse } from '../../src/messages/search/schema.ts'
import { searchIndexer } from '../../src/messages/search/store.ts'
import { directProvisioning, openStores } from '../../src/server/context.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'

/**
 * POST /v1/messages and GET /v1/app/search on SQLite (issue 32, migration 018): a new message is
 * noted by its insert trigger and indexed for search by one statement per batch, just before the
 * batch's COMMIT. What holds: a message is found by search as soon as its send is answered,
 * whether it committed alone or in a batch with others; nothing noted is left once a write has
 * committed; an edit in the same transaction as the insert is indexed once, with its new text;
 * a message another process wrote (noted, never indexed) is found once the server has started.
 * Postgres' half: test/pg/search-on-answer.test.ts.
 */

let s: TestServer
afterEach(() => s?.close())

const find = async (q: string) =>
  (await s.person.call<SearchResponse>('GET', '/v1/app/search', { query: { q } })).results.map(
    (r) => r.message_id,
  )
/**
 * The index as another connection sees it: what has committed, nothing of a batch still open
 * on the server's connection (and no write a search request makes, a token's use, can index
 * it first).
 */
let reader: Database | undefined
afterEach(() => {
  reader?.close()
  reader = undefined
})
const committed = (word: string) => {
  reader ??= new Database(databasePath(s.dir), { readonly: true })
  return reader
    .query<{ id: string }, [string]>(
      `SELECT m.id AS id FROM message_fts JOIN messages m ON m.rid = message_fts.rowid
       WHERE message_fts MATCH ?1`,
    )
    .all(`"${word}"`)
    .map((r) => r.id)
}
const noted = () =>
  (s.ctx.db.query('SELECT count(*) AS n FROM message_fts_pending').get() as { n: number }).n

describe('a sent message is searchable once its send is answered', () => {
  test('POST /v1/messages: 48 concurrent sends on two channels, each found as soon as answered', async () => {
    s = await startTestServer({ label: 'Builder' })
    const other = await s.addChannel('Deployer')
    // Concurrent sends share batches of the group commit; each is searched for the moment its
    // own answer arrives, while later ones are still being written.
    const found = await Promise.all(
      Array.from({ length: 48 }, async (_, i) => {
        const word = `zanzibar${i}x`
        const agent = i % 2 === 0 ? s.agent : other.agent
        const sent = await agent.send({ body: { title: `run ${i}`, text: `deploy ${word} ok` } })
        const inIndex = committed(word)
        return { id: sent.message.id, inIndex, hits: await find(word) }
      }),
    )
    for (const { id, inIndex, hits } of found) {
      expect(inIndex).toEqual([id])
      expect(hits).toEqual([id])
    }
    expect(s.ctx.writes.stats().flushes).toBeLessThan(48) // some did share a batch
    expect(noted()).toBe(0)
  })

  test('a send alone on an idle server is found at once, and leaves no note', async () => {
    s = await startTestServer()
    const sent = await s.agent.send({ body: { text: 'quokka sighting at noon' } })
    expect(committed('quokka')).toEqual([sent.message.id])
    expect(await find('quokka')).toEqual([sent.message.id])
    expect(noted()).toBe(0)
  })

  test('an edit in the same transaction as the insert is indexed once, with its new text', async () => {
    s = await startTestServer()
    const now = Date.now()
    const id = await s.ctx.writes.run(async (tx) => {
      const row = await tx.store.messages.insert({
        id: 'msg_same_unit',
        channel_id: s.channelId,
        sender: 'agent',
        body: JSON.stringify({ text: 'first wording ocelot' }),
        pin_key: null,
        ask_status: null,
        ask_expires_at: null,
        ask_request_hash: null,
        silent: false,
        created_at: now,
      })
      await tx.store.messages.setBody(row.rid, JSON.stringify({ text: 'second wording lynx' }), now)
      return row.id
    })
    expect(committed('lynx')).toEqual([id])
    expect(await find('lynx')).toEqual([id])
    expect(await find('ocelot')).toEqual([])
    const rows = s.ctx.db.query('SELECT count(*) AS n FROM message_fts').get() as { n: number }
    expect(rows.n).toBe(1)
    expect(noted()).toBe(0)
  })

  test('a message another process wrote is found once the server has started', async () => {
    s = await startTestServer()
    await s.stop()
    // An operator's sqlite3 (or an older hark): the trigger notes the row, nobody indexes it.
    const db = new Database(databasePath(s.dir))
    const channel = db.query('SELECT rowid FROM channels WHERE id = ?1').get(s.channelId)
    expect(channel).not.toBeNull()
    db.run(
      `INSERT INTO messages (id, channel_id, seq, sender, body, created_at, updated_at)
       VALUES ('msg_by_hand', ?1, 999, 'agent', '{"text":"written by hand: capybara"}', 1, 1)`,
      [s.channelId],
    )
    expect(db.query('SELECT count(*) AS n FROM message_fts_pending').get()).toEqual({ n: 1 })
    db.close()
    await s.start()
    expect(committed('capybara')).toEqual(['msg_by_hand'])
    expect(await find('capybara')).toEqual(['msg_by_hand'])
    expect(noted()).toBe(0)
  })
})

describe('every SQLite write path indexes before its COMMIT', () => {
  let dir: string | undefined
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  /** A person with a channel, and a message of theirs to insert in a unit. */
  const setUp = () => {
    dir = tempDir('hark-index-')
    const path = join(dir, 'hark.db')
    const db = openDatabase(path)
    db.run(
      "INSERT INTO users (id, email, is_owner, created_at) VALUES ('u', 'u@example.com', 1, 1)",
    )
    db.run(
      "INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES ('c', 'u', 'c', 1, 1)",
    )
    const message = (id: string, text: string) => ({
      id,
      channel_id: 'c',
      sender: 'agent' as const,
      body: JSON.stringify({ text }),
      pin_key: null,
      ask_status: null,
      ask_expires_at: null,
      ask_request_hash: null,
      silent: false,
      created_at: 1,
    })
    const inIndex = (word: string) => {
      const other = new Database(path, { readonly: true })
      try {
        return other
          .query<{ n: number }, [string]>(
            'SELECT count(*) AS n FROM message_fts WHERE message_fts MATCH ?1',
          )
          .get(`"${word}"`)?.n
      } finally {
        other.close()
      }
    }
    return { db, message, inIndex }
  }

  test('the group commit, a write committed alone on an idle server', async () => {
    const { db, message, inIndex } = setUp()
    const store = asyncStores(openStores(db))
    // quietMs 0: the server is always idle, so every write is a batch of its own, committed at once.
    const writes = new GroupCommit(db, new Waiters(), silentLogger, store, 0, searchIndexer(db))
    await writes.run((tx) => tx.store.messages.insert(message('m1', 'alone wombat')))
    expect(writes.stats().flushes).toBe(1)
    expect(inIndex('wombat')).toBe(1)
    await writes.close()
    db.close()
  })

  test("the direct write path (hark admin's)", async () => {
    const { db, message, inIndex } = setUp()
    const { writes } = directProvisioning(db)
    await writes.run((tx) => tx.store.messages.insert(message('m2', 'direct platypus')))
    expect(inIndex('platypus')).toBe(1)
    await writes.close()
    db.close()
  })
})
