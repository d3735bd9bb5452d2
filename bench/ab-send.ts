/**
 * Two builds of Hark under the same wrk send load, alternating, each on a fresh copy of the
 * same provisioned data directory: server CPU per send (utime + stime from /proc) and the rate,
 * round by round. The figure that holds on a loaded machine is the CPU per send.
 *
 *   bun bench/ab-send.ts --vs OLD_BINARY [--rounds 3] [--seconds 6] [--channels 1]
 *                        [--old-schema 17] [--preload 250000]
 *
 * `--old-schema N`: the older build understands schema N only; the copy it runs on is taken
 * back to N first, a version at a time (19 → 18: the by-sender indexes back; 18 → 17:
 * migration 018's search triggers undone; see `downTo`).
 * `--preload N`: the data directory holds N messages first (random ids, as every build before
 * time-ordered message ids made them), indexed for search: a deployment that has been used, where
 * the indexes no longer fit in a few pages.
 * Needs dist/hark and Debian's wrk.
 */
import { Database } from 'bun:sqlite'
import { cpSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { randomBase62 } from '../src/core/ids.ts'
import { searchIndexer } from '../src/messages/search/store.ts'
import { messageStore } from '../src/messages/store.ts'
import { arg, argText, provision, startHark, startServe, tempDataDir } from './lib.ts'
import { runWrk, WRK_SEND_BODY } from './wrk.ts'

const ROUNDS = arg('rounds', 3)
const SECONDS = arg('seconds', 6)
const CHANNELS = arg('channels', 1)
const OLD_SCHEMA = arg('old-schema', 0)
const PRELOAD = arg('preload', 0)
const VS = argText('vs')
if (!VS) throw new Error('--vs OLD_BINARY')

/** What undoes each version, newest first: `downTo` runs them down to the one asked for. */
const UNDO: Record<number, string> = {
  // 19 → 18: the two indexes by sender back, the person's partial index gone.
  19: `DROP INDEX messages_feed_human;
    CREATE INDEX messages_feed_by_sender ON messages(channel_id, sender, seq);
    CREATE INDEX messages_live_by_sender ON messages(channel_id, sender, rid)
      WHERE deleted_at IS NULL AND pin_key IS NULL;`,
  // 18 → 17: the FTS5 triggers of migration 012 back, the notes' table gone.
  18: `DROP TRIGGER message_fts_insert; DROP TRIGGER message_fts_update;
    DROP TRIGGER message_fts_delete; DROP TABLE message_fts_pending;
    CREATE TRIGGER message_fts_insert AFTER INSERT ON messages WHEN NEW.body IS NOT NULL
    BEGIN INSERT INTO message_fts (rowid, title, body)
      SELECT rid, title, body FROM message_search_text WHERE rid = NEW.rid; END;
    CREATE TRIGGER message_fts_update AFTER UPDATE OF body, answer, deleted_at ON messages
    BEGIN DELETE FROM message_fts WHERE rowid = OLD.rid; INSERT INTO message_fts (rowid, title, body)
      SELECT rid, title, body FROM message_search_text WHERE rid = NEW.rid; END;
    CREATE TRIGGER message_fts_delete AFTER DELETE ON messages
    BEGIN DELETE FROM message_fts WHERE rowid = OLD.rid; END;`,
}

/** Takes the copy's schema back to `version`, one version at a time. */
function downTo(dir: string, version: number): void {
  const db = new Database(join(dir, 'hark.db'))
  let at = (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
  for (; at > version; at--) {
    const undo = UNDO[at]
    if (!undo) throw new Error(`--old-schema: no way back from schema ${at}`)
    db.run(`${undo} PRAGMA user_version = ${at - 1};`)
  }
  db.close()
}

/** `count` messages spread over the channels, numbered and indexed by the message store. */
function preload(dir: string, channelIds: string[], count: number): void {
  const db = new Database(join(dir, 'hark.db'))
  const messages = messageStore(db)
  const index = searchIndexer(db)
  const body = JSON.stringify(JSON.parse(WRK_SEND_BODY).body)
  const now = Date.now()
  for (let done = 0; done < count; ) {
    db.transaction(() => {
      for (let i = 0; i < 10_000 && done < count; i++, done++) {
        messages.insert({
          id: `msg_${randomBase62(18)}`,
          channel_id: channelIds[done % channelIds.length] as string,
          sender: 'agent',
          body,
          silent: false,
          pin_key: null,
          ask_status: null,
          ask_expires_at: null,
          ask_request_hash: null,
          created_at: now - count + done,
        })
      }
      index()
    })()
  }
  db.close()
}

const base = tempDataDir('hark-ab-')
const provisioned = await provision(base, CHANNELS)
const tokens = provisioned.agentTokens
if (PRELOAD > 0) preload(base, provisioned.channelIds, PRELOAD)
const request = { method: 'POST' as const, path: '/v1/messages', tokens, body: WRK_SEND_BODY }
const results: Record<string, number[]> = { new: [], old: [] }
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const which of round % 2 === 1 ? ['new', 'old'] : ['old', 'new']) {
      const dir = tempDataDir('hark-ab-run-')
      cpSync(base, dir, { recursive: true })
      if (which === 'old' && OLD_SCHEMA > 0) downTo(dir, OLD_SCHEMA)
      const server =
        which === 'new'
          ? await startHark(dir, ['--write-limit', '0'])
          : await startServe([VS], dir, ['--write-limit', '0'])
      try {
        await runWrk(server.url, server.proc.pid, request, 2, 32)
        const r = await runWrk(server.url, server.proc.pid, request, SECONDS, 32)
        const us = (r.serverCpuMs * 1000) / r.requests
        results[which]?.push(us)
        console.log(
          `round ${round} ${which}: ${r.perSecond.toFixed(0)}/s, ${us.toFixed(0)} µs server CPU per send, ${r.errors} errors`,
        )
      } finally {
        await server.stop()
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
  const pairs = results.new?.map((n, i) => (n / (results.old?.[i] ?? Number.NaN)).toFixed(2))
  console.log(`new / old CPU per send, round by round: ${pairs?.join(', ')}`)
} finally {
  rmSync(base, { recursive: true, force: true })
}
