import type { Database } from 'bun:sqlite'
import type { AckState, AskInfo } from './schema.ts'

/** A row of `messages`, as stored. */
export interface MessageRow {
  rid: number
  id: string
  channel_id: string
  seq: number
  sender: 'agent' | 'human'
  body: string | null
  silent: number
  state: AckState | null
  pin_key: string | null
  ask_status: AskInfo['status'] | null
  ask_expires_at: number | null
  ask_answered_at: number | null
  answer: string | null
  /** Approvals: SHA-256 of their `{ tool, input }` (migration 008). */
  ask_request_hash: string | null
  /** Why a cancelled question was withdrawn. */
  ask_reason: string | null
  /** The passkey's assertion over the answer (JSON, migration 009). */
  ask_proof: string | null
  created_at: number
  updated_at: number
  deleted_at: number | null
}

export type NewMessage = Pick<
  MessageRow,
  | 'id'
  | 'channel_id'
  | 'sender'
  | 'body'
  | 'pin_key'
  | 'ask_status'
  | 'ask_expires_at'
  | 'ask_request_hash'
> & { silent: boolean; created_at: number }

/** How a question ends: its status, answer (JSON text), and what came with it. */
export interface AskSettlement {
  status: AskInfo['status']
  answer: string | null
  answeredAt: number | null
  reason: string | null
  proof: string | null
}

/**
 * The person's feed (?1 the person, ?2 the cursor, ?3 the page): every channel of theirs, in
 * change order. For each channel SQLite reads at most a page of changes after the cursor from
 * messages_feed (covering), then sorts those few: the work is bounded by channels × page,
 * however far back the cursor is. (Their channels share one change sequence, so seq orders them.)
 */
export const PERSON_FEED_SQL = `SELECT m.* FROM channels c JOIN messages m
    ON m.rid IN (SELECT rid FROM messages WHERE channel_id = c.id AND seq > +?2
                 ORDER BY seq LIMIT +?3)
  WHERE c.user_id = +?1
  ORDER BY m.seq LIMIT +?3`

/**
 * The person's messages in one channel after a cursor, from their partial index (migration
 * 019). The sender is written in, not a parameter: SQLite can use a partial index only when
 * the statement's text implies its condition.
 */
export const FEED_OF_PERSON_SQL = `SELECT * FROM messages INDEXED BY messages_feed_human
  WHERE channel_id = +?1 AND sender = 'human' AND seq > +?2 ORDER BY seq LIMIT +?3`

/** Every SQL statement on messages, prepared once per database. */
export function messageStore(db: Database) {
  const q = {
    // Each person has their own change sequence (users.change_seq, migration 006): a change
    // takes the next number of the person whose channel it is in, so no cursor they see moves
    // with anyone else's activity. Found from the person, the channel or the message changed.
    nextSeqOfUser: db.query<{ value: number }, [string]>(
      'UPDATE users SET change_seq = change_seq + 1 WHERE id = ?1 RETURNING change_seq AS value',
    ),
    nextSeqOfChannel: db.query<{ value: number }, [string]>(
      `UPDATE users SET change_seq = change_seq + 1
       WHERE id = (SELECT user_id FROM channels WHERE id = ?1) RETURNING change_seq AS value`,
    ),
    nextSeqOfRow: db.query<{ value: number }, [number]>(
      `UPDATE users SET change_seq = change_seq + 1
       WHERE id = (SELECT c.user_id FROM messages m JOIN channels c ON c.id = m.channel_id
                   WHERE m.rid = +?1)
       RETURNING change_seq AS value`,
    ),
    // The server-wide high-water mark (counters.change_seq): for checks of the data only, never
    // handed to a client (it would tell of other people's activity).
    highWater: db.query<null, [number]>(
      "UPDATE counters SET value = max(value, +?1) WHERE name = 'change_seq'",
    ),
    insert: db.query<
      MessageRow,
      [
        string,
        string,
        number,
        string,
        string | null,
        number,
        string | null,
        string | null,
        number | null,
        string | null,
        number,
        number,
      ]
    >(
      `INSERT INTO messages (id, channel_id, seq, sender, body, silent, pin_key, ask_status,
         ask_expires_at, ask_request_hash, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) RETURNING *`,
    ),
    byId: db.query<MessageRow, [string]>('SELECT * FROM messages WHERE id = ?1'),
    feed: db.query<MessageRow, [string, number, number]>(
      'SELECT * FROM messages WHERE channel_id = +?1 AND seq > +?2 ORDER BY seq LIMIT +?3',
    ),
    // One side of the conversation (migration 019): the person's messages from their own
    // index; the agent's from the feed's, passing over the person's few.
    feedOfPerson: db.query<MessageRow, [string, number, number]>(FEED_OF_PERSON_SQL),
    feedOfAgent: db.query<MessageRow, [string, number, number]>(
      `SELECT * FROM messages INDEXED BY messages_feed
       WHERE channel_id = +?1 AND sender = 'agent' AND seq > +?2 ORDER BY seq LIMIT +?3`,
    ),
    setBody: db.query<MessageRow, [number, string, number, number]>(
      'UPDATE messages SET body = ?2, seq = ?3, updated_at = ?4 WHERE rid = ?1 RETURNING *',
    ),
    setState: db.query<MessageRow, [number, string, number, number]>(
      'UPDATE messages SET state = ?2, seq = ?3, updated_at = ?4 WHERE rid = ?1 RETURNING *',
    ),
    setAsk: db.query<
      MessageRow,
      [number, string, string | null, number | null, string | null, string | null, number, number]
    >(
      `UPDATE messages SET ask_status = ?2, answer = ?3, ask_answered_at = ?4, ask_reason = ?5,
         ask_proof = ?6, seq = ?7, updated_at = ?8 WHERE rid = ?1 AND ask_status = 'open'
       RETURNING *`,
    ),
    markDeleted: db.query<MessageRow, [number, number, number]>(
      `UPDATE messages SET body = NULL, answer = NULL, pin_key = NULL, ask_status = NULL,
         ask_expires_at = NULL, deleted_at = ?3, updated_at = ?3, seq = ?2
       WHERE rid = ?1 RETURNING *`,
    ),
    openAsks: db.query<MessageRow, [string]>(
      "SELECT * FROM messages WHERE channel_id = +?1 AND ask_status = 'open' ORDER BY rid",
    ),
    // Every open question of a person, oldest first: the app's one place for what waits on them.
    openAsksOfUser: db.query<MessageRow, [string, number]>(
      `SELECT m.* FROM channels c JOIN messages m INDEXED BY messages_open_asks
         ON m.channel_id = c.id AND m.ask_status = 'open'
       WHERE c.user_id = +?1 ORDER BY m.created_at, m.rid LIMIT +?2`,
    ),
    countOpenAsks: db.query<{ n: number }, [string]>(
      "SELECT count(*) AS n FROM messages WHERE channel_id = ?1 AND ask_status = 'open'",
    ),
    firstExpiry: db.query<{ at: number }, []>(
      `SELECT ask_expires_at AS at FROM messages
       WHERE ask_status = 'open' AND ask_expires_at IS NOT NULL
       ORDER BY ask_expires_at LIMIT 1`,
    ),
    expiredBy: db.query<MessageRow, [number]>(
      `SELECT * FROM messages WHERE ask_status = 'open' AND ask_expires_at IS NOT NULL
         AND ask_expires_at <= +?1 ORDER BY ask_expires_at LIMIT 500`,
    ),
    pin: db.query<MessageRow, [string, string]>(
      'SELECT * FROM messages WHERE channel_id = ?1 AND pin_key = ?2',
    ),
    pins: db.query<MessageRow, [string]>(
      'SELECT * FROM messages WHERE channel_id = +?1 AND pin_key IS NOT NULL ORDER BY pin_key',
    ),
    lastLive: db.query<MessageRow, [string]>(
      `SELECT * FROM messages INDEXED BY messages_live
       WHERE channel_id = +?1 AND deleted_at IS NULL AND pin_key IS NULL
       ORDER BY rid DESC LIMIT 1`,
    ),
    personFeed: db.query<MessageRow, [string, number, number]>(PERSON_FEED_SQL),
    // A thread opens at its end and pages back: the newest live, unpinned messages before a rid.
    tail: db.query<MessageRow, [string, number, number]>(
      `SELECT * FROM messages INDEXED BY messages_live
       WHERE channel_id = +?1 AND deleted_at IS NULL AND pin_key IS NULL AND rid < +?2
       ORDER BY rid DESC LIMIT +?3`,
    ),
    currentSeq: db.query<{ value: number }, [string]>(
      'SELECT change_seq AS value FROM users WHERE id = ?1',
    ),
    countPins: db.query<{ n: number }, [string]>(
      'SELECT count(*) AS n FROM messages WHERE channel_id = ?1 AND pin_key IS NOT NULL',
    ),
  }

  /** The number a change takes; throws when there is no such person (nothing may go unnumbered). */
  const taken = (row: { value: number } | null): number => {
    if (!row) throw new Error('a change with no person to number it')
    q.highWater.run(row.value)
    return row.value
  }
  const seqOfRow = (rid: number) => taken(q.nextSeqOfRow.get(rid))

  return {
    /** The next change number of this person (a change to their channels, not to a message). */
    nextSeq: (userId: string) => taken(q.nextSeqOfUser.get(userId)),
    insert(m: NewMessage): MessageRow {
      return q.insert.get(
        m.id,
        m.channel_id,
        taken(q.nextSeqOfChannel.get(m.channel_id)),
        m.sender,
        m.body,
        m.silent ? 1 : 0,
        m.pin_key,
        m.ask_status,
        m.ask_expires_at,
        m.ask_request_hash,
        m.created_at,
        m.created_at,
      ) as MessageRow
    },
    byId: (id: string) => q.byId.get(id) ?? undefined,
    /**
     * The row, read inside a unit to decide a change of it (an edit, a delete): here the unit
     * runs alone, so it is the row as the change will find it (on Postgres the person's row is
     * locked first, for the same guarantee among instances).
     */
    forChange: (id: string) => q.byId.get(id) ?? undefined,
    feed: (channelId: string, since: number, limit: number, sender?: 'agent' | 'human') =>
      (sender === 'human' ? q.feedOfPerson : sender === 'agent' ? q.feedOfAgent : q.feed).all(
        channelId,
        since,
        limit,
      ),
    setBody: (rid: number, body: string, now: number) =>
      q.setBody.get(rid, body, seqOfRow(rid), now) as MessageRow,
    setState: (rid: number, state: AckState, now: number) =>
      q.setState.get(rid, state, seqOfRow(rid), now) as MessageRow,
    /**
     * Settles an open question; undefined when it was no longer open (answered, expired or
     * cancelled first: on Postgres, by another instance). The caller rolls its unit back then,
     * so the change number taken for it is given back.
     */
    setAsk: (rid: number, s: AskSettlement, now: number) =>
      q.setAsk.get(rid, s.status, s.answer, s.answeredAt, s.reason, s.proof, seqOfRow(rid), now) ??
      undefined,
    markDeleted: (rid: number, now: number) =>
      q.markDeleted.get(rid, seqOfRow(rid), now) as MessageRow,
    openAsks: (channelId: string) => q.openAsks.all(channelId),
    openAsksOfUser: (userId: string, limit: number) => q.openAsksOfUser.all(userId, limit),
    countOpenAsks: (channelId: string) => q.countOpenAsks.get(channelId)?.n ?? 0,
    firstExpiry: () => q.firstExpiry.get()?.at,
    expiredBy: (now: number) => q.expiredBy.all(now),
    pin: (channelId: string, key: string) => q.pin.get(channelId, key) ?? undefined,
    pins: (channelId: string) => q.pins.all(channelId),
    countPins: (channelId: string) => q.countPins.get(channelId)?.n ?? 0,
    personFeed: (userId: string, since: number, limit: number) =>
      q.personFeed.all(userId, since, limit),
    /** Newest first: up to `limit` live, unpinned messages with a rid below `beforeRid`. */
    tail: (channelId: string, beforeRid: number, limit: number) =>
      q.tail.all(channelId, beforeRid, limit),
    /**
     * The person's last change number: a cursor that starts their feed, or a feed of one of
     * their channels, at "now".
     */
    currentSeq: (userId: string) => q.currentSeq.get(userId)?.value ?? 0,
    /** The newest live, unpinned message: the channel list's preview. */
    lastLive: (channelId: string) => q.lastLive.get(channelId) ?? undefined,
  }
}

export type MessageStore = ReturnType<typeof messageStore>
