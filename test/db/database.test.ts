import { Database } from 'bun:sqlite'
import { afterEach, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase, SchemaTooNewError, schemaVersion } from '../../src/db/database.ts'
import { latestVersion } from '../../src/db/migrations/index.ts'
import { FEED_OF_PERSON_SQL, PERSON_FEED_SQL } from '../../src/messages/store.ts'
import { openStores } from '../../src/server/context.ts'
import { tempDir } from '../harness.ts'

let dir = ''
afterEach(() => rmSync(dir, { recursive: true, force: true }))

test('a new database is migrated to the latest version with WAL and FULL sync', () => {
  dir = tempDir()
  const db = openDatabase(join(dir, 'hark.db'))
  expect(schemaVersion(db)).toBe(latestVersion)
  expect(db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
  expect(db.query('PRAGMA synchronous').get()).toEqual({ synchronous: 2 })
  expect(db.query('PRAGMA busy_timeout').get()).toEqual({ timeout: 5000 })
  expect(db.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
  db.close()
})

test('opening again applies nothing twice and keeps data', () => {
  dir = tempDir()
  const path = join(dir, 'hark.db')
  const db = openDatabase(path)
  db.run("INSERT INTO users (id, email, created_at) VALUES ('usr_1', 'a@example.com', 1)")
  db.close()
  const again = openDatabase(path)
  expect(schemaVersion(again)).toBe(latestVersion)
  expect(again.query('SELECT count(*) AS n FROM users').get()).toEqual({ n: 1 })
  again.close()
})

test('a database from a newer hark is refused and left untouched', () => {
  dir = tempDir()
  const path = join(dir, 'hark.db')
  openDatabase(path).close()
  const raw = new Database(path)
  raw.run(`PRAGMA user_version = ${latestVersion + 1}`)
  raw.close()
  expect(() => openDatabase(path)).toThrow(SchemaTooNewError)
  const check = new Database(path)
  expect(schemaVersion(check)).toBe(latestVersion + 1)
  check.close()
})

/**
 * Every statement an agent route runs must use an index: no full scan of messages, files or
 * tokens, so each route stays O(log n) in the size of the channel.
 */
test('the hot statements use indexes, not scans', () => {
  dir = tempDir()
  const db = openDatabase(join(dir, 'hark.db'))
  openStores(db) // prepares every statement (a syntax error would throw here)
  const plans: Record<string, string> = {
    feed: 'SELECT * FROM messages WHERE channel_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3',
    feedOfPerson:
      "SELECT * FROM messages WHERE channel_id = ?1 AND sender = 'human' AND seq > ?2 ORDER BY seq LIMIT ?3",
    feedOfAgent:
      "SELECT * FROM messages WHERE channel_id = ?1 AND sender = 'agent' AND seq > ?2 ORDER BY seq LIMIT ?3",
    unread:
      "SELECT count(*) FROM (SELECT 1 FROM messages WHERE channel_id = ?1 AND sender = 'agent' AND rid > ?2 AND deleted_at IS NULL AND pin_key IS NULL LIMIT 1000)",
    byId: 'SELECT * FROM messages WHERE id = ?1',
    openAsks: "SELECT * FROM messages WHERE channel_id = ?1 AND ask_status = 'open' ORDER BY rid",
    countOpenAsks: "SELECT count(*) FROM messages WHERE channel_id = ?1 AND ask_status = 'open'",
    firstExpiry:
      "SELECT ask_expires_at FROM messages WHERE ask_status = 'open' AND ask_expires_at IS NOT NULL ORDER BY ask_expires_at LIMIT 1",
    pin: 'SELECT * FROM messages WHERE channel_id = ?1 AND pin_key = ?2',
    pins: 'SELECT * FROM messages WHERE channel_id = ?1 AND pin_key IS NOT NULL ORDER BY pin_key',
    token: 'SELECT * FROM tokens WHERE hash = ?1',
    file: 'SELECT * FROM files WHERE id = ?1 AND channel_id = ?2',
    nextSeqOfChannel:
      'UPDATE users SET change_seq = change_seq + 1 WHERE id = (SELECT user_id FROM channels WHERE id = ?1)',
    nextSeqOfRow:
      'UPDATE users SET change_seq = change_seq + 1 WHERE id = (SELECT c.user_id FROM messages m JOIN channels c ON c.id = m.channel_id WHERE m.rid = ?1)',
    highWater: "UPDATE counters SET value = max(value, ?1) WHERE name = 'change_seq'",
    currentSeq: 'SELECT change_seq FROM users WHERE id = ?1',
  }
  for (const [name, sql] of Object.entries(plans)) {
    const plan = db
      .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`)
      .all()
      .map((r) => r.detail)
      .join('; ')
    expect(`${name}: ${plan}`).not.toMatch(
      /SCAN (messages|files|tokens|counters|users|channels)\b(?! USING)/,
    )
    expect(`${name}: ${plan}`).not.toContain('USE TEMP B-TREE')
  }
  db.close()
})

/**
 * An agent's send writes none of the indexes that only one side's reads need (migration 019):
 * the person's messages have their own partial index, which the feed of `sender=human` must
 * use (with the sender as a parameter SQLite could not, and would walk the agent's messages).
 */
test("the feed of the person's messages reads their own index; a send writes three of messages' indexes", () => {
  dir = tempDir()
  const db = openDatabase(join(dir, 'hark.db'))
  const plan = db
    .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${FEED_OF_PERSON_SQL}`)
    .all()
    .map((r) => r.detail)
  expect(plan).toEqual(['SEARCH messages USING INDEX messages_feed_human (channel_id=? AND seq>?)'])
  const indexes = db
    .query<{ name: string; partial: number }, []>(
      "SELECT name, partial FROM pragma_index_list('messages') ORDER BY name",
    )
    .all()
  // Every index an agent's plain message lands in: the unique id, the feed, the live list.
  const full = indexes.filter((i) => i.partial === 0).map((i) => i.name)
  expect(full).toEqual(['messages_feed', 'sqlite_autoindex_messages_1'])
  expect(indexes.map((i) => i.name)).toContain('messages_feed_human')
  expect(indexes.map((i) => i.name)).not.toContain('messages_feed_by_sender')
  expect(indexes.map((i) => i.name)).not.toContain('messages_live_by_sender')
  db.close()
})

/**
 * The person's feed reads each of their channels from messages_feed, at most a page each, and
 * sorts only those: bounded by channels × page however old the cursor (each person has their
 * own change sequence since version 6, so there is no server-wide order to walk instead).
 */
test("the person's feed reads a page per channel from messages_feed", () => {
  dir = tempDir()
  const db = openDatabase(join(dir, 'hark.db'))
  const plan = db
    .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${PERSON_FEED_SQL}`)
    .all()
    .map((r) => r.detail)
  expect(plan).toEqual([
    'SEARCH c USING INDEX channels_by_user (user_id=?)',
    'SEARCH m USING INTEGER PRIMARY KEY (rowid=?)',
    'CORRELATED LIST SUBQUERY 1',
    'SEARCH messages USING COVERING INDEX messages_feed (channel_id=? AND seq>?)',
    'USE TEMP B-TREE FOR ORDER BY',
  ])
  db.close()
})
