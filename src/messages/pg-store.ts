import type { SQL } from 'bun'
import { counted, every, first, one, type PgTwin, rowOf } from '../db/pg/twin.ts'
import { newMessageText } from './search/text.ts'
import type { MessageRow, MessageStore } from './store.ts'

const row = rowOf<MessageRow>({
  ints: [
    'rid',
    'seq',
    'ask_expires_at',
    'ask_answered_at',
    'created_at',
    'updated_at',
    'deleted_at',
  ],
})

/** The number a change takes; throws when there is no such person (nothing may go unnumbered). */
function taken(found: { value: string | number } | undefined): number {
  if (!found) throw new Error('a change with no person to number it')
  return Number(found.value)
}

/**
 * messages/store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction for writes.
 *
 * The change sequence (pg migration 006's note, docs/scaling.md "Why seq needs no Postgres
 * sequence"): every write takes its number from the person's row with `UPDATE users ...
 * RETURNING` inside the writing transaction. Under READ COMMITTED that UPDATE holds the row's
 * lock until commit, so a second writer for the same person (on this instance or another)
 * waits there and numbers after the first commits: one person's seqs commit in order, and a
 * reader's cursor never passes a change that commits later. Different people lock different
 * rows and never wait for each other.
 *
 * Unlike SQLite, no write here updates `counters.change_seq`, the server-wide high-water mark:
 * it is one row, and every writer of every instance would queue on its lock, undoing the point
 * of per-person rows. On Postgres that mark is `SELECT max(change_seq) FROM users` when a check
 * needs it (pg migration 006).
 */
export function pgMessageStore(sql: SQL): PgTwin<MessageStore> {
  const seqOfUser = async (userId: string) =>
    taken(
      (
        await sql`UPDATE users SET change_seq = change_seq + 1 WHERE id = ${userId}
                  RETURNING change_seq AS value`
      )[0],
    )
  const seqOfRow = async (rid: number) =>
    taken(
      (
        await sql`UPDATE users SET change_seq = change_seq + 1
                  WHERE id = (SELECT c.user_id FROM messages m JOIN channels c ON c.id = m.channel_id
                              WHERE m.rid = ${rid})
                  RETURNING change_seq AS value`
      )[0],
    )
  // Each change below takes the person's number before it touches the message, as insert
  // does: the row lock is what orders the change's commit among the person's others. `set` is
  // the columns the change writes (Bun's helper; null writes NULL); `open` limits it to a
  // question still open.
  const change = async (rid: number, set: object, open = false) => {
    const values = sql({ ...set, seq: await seqOfRow(rid) } as Record<string, unknown>)
    return open
      ? sql`UPDATE messages SET ${values} WHERE rid = ${rid} AND ask_status = 'open' RETURNING *`
      : sql`UPDATE messages SET ${values} WHERE rid = ${rid} RETURNING *`
  }

  return {
    nextSeq: seqOfUser,
    async insert(m) {
      // The number first, then the row, in one statement (one round trip fewer while the
      // person's row is locked, and all of one person's writes wait on that lock): the UPDATE
      // in WITH runs as `s` is scanned, before the row is formed, so its `rid` (an identity,
      // handed out like a sequence when the row is formed) is drawn under the person's lock
      // too, and rids of one person also ascend in commit order (read marks and unread counts
      // compare them). Parameters are typed: in a SELECT list nothing else types them.
      // Its search row too, from the text computed here (search/text.ts), in the same
      // statement: the insert trigger then finds it there and does nothing (pg migration 20).
      // A body that text.ts leaves to Postgres (no text: no row here) is indexed by that
      // trigger, as before.
      const text = newMessageText(m.body)
      const title = text?.title ?? null
      const body = text?.body ?? null
      const [inserted] = await sql`
        WITH s AS (
          UPDATE users SET change_seq = change_seq + 1
          WHERE id = (SELECT user_id FROM channels WHERE id = ${m.channel_id})
          RETURNING change_seq
        ), m AS (
          INSERT INTO messages (id, channel_id, seq, sender, body, silent, pin_key, ask_status,
            ask_expires_at, ask_request_hash, created_at, updated_at)
          SELECT ${m.id}::text, ${m.channel_id}::text, s.change_seq, ${m.sender}::text,
            ${m.body}::text, ${m.silent ? 1 : 0}::integer, ${m.pin_key}::text,
            ${m.ask_status}::text, ${m.ask_expires_at}::bigint, ${m.ask_request_hash}::text,
            ${m.created_at}::bigint, ${m.created_at}::bigint
          FROM s
          RETURNING *
        ), indexed AS (
          INSERT INTO message_search (rid, title, body, document)
          SELECT m.rid, ${title}::text, ${body}::text,
            setweight(to_tsvector('simple', unaccent(${title}::text)), 'A') ||
            setweight(to_tsvector('simple', unaccent(${body}::text)), 'B')
          FROM m
          WHERE ${title}::text IS NOT NULL
        )
        SELECT * FROM m`
      if (!inserted) throw new Error('a change with no person to number it')
      return row(inserted)
    },
    byId: (id) => first(sql`SELECT * FROM messages WHERE id = ${id}`, row),
    async forChange(id) {
      // As `pin`: the channel's person's row locked first (NO KEY UPDATE, as the change's own
      // number will lock it), so a change of this message another instance has not committed
      // is waited for and then seen: an edit never writes over a delete it read too early.
      await sql`SELECT 1 FROM users WHERE id = (
                  SELECT c.user_id FROM messages m JOIN channels c ON c.id = m.channel_id
                  WHERE m.id = ${id})
                FOR NO KEY UPDATE`
      return first(sql`SELECT * FROM messages WHERE id = ${id}`, row)
    },
    feed: (channelId, since, limit, sender) =>
      every(
        // The sender a literal: a prepared statement's generic plan can use the person's
        // partial index (migration 019) only when its condition is in the text.
        sender === 'human'
          ? sql`SELECT * FROM messages
              WHERE channel_id = ${channelId} AND sender = 'human' AND seq > ${since}
              ORDER BY seq LIMIT ${limit}`
          : sender === 'agent'
            ? sql`SELECT * FROM messages
                WHERE channel_id = ${channelId} AND sender = 'agent' AND seq > ${since}
                ORDER BY seq LIMIT ${limit}`
            : sql`SELECT * FROM messages WHERE channel_id = ${channelId} AND seq > ${since}
                ORDER BY seq LIMIT ${limit}`,
        row,
      ),
    setBody: (rid, body, now) => one(change(rid, { body, updated_at: now }), row),
    setState: (rid, state, now) => one(change(rid, { state, updated_at: now }), row),
    setAsk: (rid, s, now) =>
      // Two instances settling one question (an answer and the expiry): the second UPDATE
      // waits on the first's row lock, re-checks ask_status against the committed row and
      // changes nothing.
      first(
        change(
          rid,
          {
            ask_status: s.status,
            answer: s.answer,
            ask_answered_at: s.answeredAt,
            ask_reason: s.reason,
            ask_proof: s.proof,
            updated_at: now,
          },
          true,
        ),
        row,
      ),
    markDeleted: (rid, now) =>
      one(
        change(rid, {
          body: null,
          answer: null,
          pin_key: null,
          ask_status: null,
          ask_expires_at: null,
          deleted_at: now,
          updated_at: now,
        }),
        row,
      ),
    openAsks: (channelId) =>
      every(
        sql`SELECT * FROM messages WHERE channel_id = ${channelId} AND ask_status = 'open'
                  ORDER BY rid`,
        row,
      ),
    openAsksOfUser: (userId, limit) =>
      // SQLite's INDEXED BY hint dropped: Postgres' planner picks messages_open_asks itself.
      every(
        sql`SELECT m.* FROM channels c JOIN messages m
                    ON m.channel_id = c.id AND m.ask_status = 'open'
                  WHERE c.user_id = ${userId} ORDER BY m.created_at, m.rid LIMIT ${limit}`,
        row,
      ),
    countOpenAsks: (channelId) =>
      counted(sql`SELECT count(*) AS n FROM messages
                  WHERE channel_id = ${channelId} AND ask_status = 'open'`),
    async firstExpiry() {
      const [first] = await sql`SELECT ask_expires_at AS at FROM messages
        WHERE ask_status = 'open' AND ask_expires_at IS NOT NULL
        ORDER BY ask_expires_at LIMIT 1`
      return first ? Number(first.at) : undefined
    },
    expiredBy: (now) =>
      every(
        sql`SELECT * FROM messages WHERE ask_status = 'open' AND ask_expires_at IS NOT NULL
                    AND ask_expires_at <= ${now} ORDER BY ask_expires_at LIMIT 500`,
        row,
      ),
    async pin(channelId, key) {
      // Every caller decides a write by this read (put: create the pin or replace it; patch,
      // delete), so the channel's person's row is locked first, in its own statement, as the
      // seq's UPDATE would lock it a moment later: under READ COMMITTED two instances putting
      // one key at once would otherwise both find no pin and both insert (the second failing
      // on messages_pins), or both count below the pin limit. With the lock the second waits
      // and then finds the first's pin (and counts it). Outside a transaction it ends with the
      // statement. NO KEY UPDATE, as the seq's UPDATE takes: no conflict with foreign-key checks.
      await sql`SELECT 1 FROM users
                WHERE id = (SELECT user_id FROM channels WHERE id = ${channelId})
                FOR NO KEY UPDATE`
      return first(
        sql`SELECT * FROM messages WHERE channel_id = ${channelId} AND pin_key = ${key}`,
        row,
      )
    },
    pins: (channelId) =>
      // COLLATE "C": SQLite orders text by its bytes; the database's collation may not.
      every(
        sql`SELECT * FROM messages WHERE channel_id = ${channelId} AND pin_key IS NOT NULL
                  ORDER BY pin_key COLLATE "C"`,
        row,
      ),
    countPins: (channelId) =>
      counted(sql`SELECT count(*) AS n FROM messages
                  WHERE channel_id = ${channelId} AND pin_key IS NOT NULL`),
    personFeed: (userId, since, limit) =>
      // PERSON_FEED_SQL's bounded plan in Postgres' words: for each channel of the person at
      // most a page after the cursor (LATERAL, from messages_feed), then the few sorted.
      every(
        sql`SELECT m.* FROM channels c CROSS JOIN LATERAL (
                    SELECT * FROM messages WHERE channel_id = c.id AND seq > ${since}
                    ORDER BY seq LIMIT ${limit}) m
                  WHERE c.user_id = ${userId}
                  ORDER BY m.seq LIMIT ${limit}`,
        row,
      ),
    tail: (channelId, beforeRid, limit) =>
      every(
        sql`SELECT * FROM messages
                  WHERE channel_id = ${channelId} AND deleted_at IS NULL AND pin_key IS NULL
                    AND rid < ${beforeRid}
                  ORDER BY rid DESC LIMIT ${limit}`,
        row,
      ),
    async currentSeq(userId) {
      const [found] = await sql`SELECT change_seq AS value FROM users WHERE id = ${userId}`
      return found ? Number(found.value) : 0
    },
    lastLive: (channelId) =>
      first(
        sql`SELECT * FROM messages
        WHERE channel_id = ${channelId} AND deleted_at IS NULL AND pin_key IS NULL
        ORDER BY rid DESC LIMIT 1`,
        row,
      ),
  }
}
