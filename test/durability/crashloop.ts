/**
 * The crash loop shared by the CI crash test (test/durability/crash.test.ts) and the long run
 * (bench/crash.ts): `dist/hark` serves mixed writes — messages, questions and their answers,
 * pins, file uploads — from concurrent clients that record every write the server
 * acknowledged (answered 200). At a random moment the server is killed with SIGKILL. Then:
 *   - the database passes `PRAGMA integrity_check` and `foreign_key_check`;
 *   - every acknowledged message, answer, pin and file is there, as acknowledged;
 *   - the server starts again, and once it has (it sweeps what a crash left half-done) no
 *     partial upload and no file without a record remain, and every record has its whole file.
 */
import { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { openDatabase } from '../../src/db/database.ts'
import { addChannel, addPersonToken, addUser } from '../../src/people/service.ts'
import { directProvisioning } from '../../src/server/context.ts'
import { HARK, requireBinary } from '../binary/process.ts'

export interface CrashOptions {
  dir: string
  rounds: number
  /** The kill comes between these many milliseconds after the load starts. */
  minMs: number
  maxMs: number
  /** Concurrent clients. */
  workers?: number
  log?: (line: string) => void
}

export interface CrashSummary {
  rounds: number
  acked: { messages: number; answers: number; pins: number; files: number }
  /** Every broken promise found; empty when the server kept all of them. */
  failures: string[]
}

interface Acked {
  /** message id → the text it was sent with. */
  messages: Map<string, string>
  /** question id → the answer acknowledged. */
  answers: Map<string, boolean>
  /** `channel/key` → the text of the last acknowledged PUT. */
  pins: Map<string, { channel: string; key: string; text: string; at: number }>
  /** file id → sha256 of the bytes. */
  files: Map<string, { sha256: string; size: number; channel: string }>
}

async function provisionDir(dir: string, channels: number) {
  const db = openDatabase(join(dir, 'hark.db'))
  const p = directProvisioning(db)
  await addUser(p, { email: 'crash@example.com', owner: true })
  const agents: { token: string; channel: string }[] = []
  for (let i = 0; i < channels; i++) {
    const made = await addChannel(p, { email: 'crash@example.com', label: `crash ${i}` })
    agents.push({ token: made.token, channel: made.channel.id })
  }
  const person = (await addPersonToken(p, { email: 'crash@example.com' })).token
  await p.writes.close()
  db.close()
  return { agents, person }
}

async function start(dir: string): Promise<{ proc: Subprocess; url: string }> {
  const proc = Bun.spawn(
    [HARK, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dir, '--write-limit', '0'],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  let log = ''
  const decoder = new TextDecoder()
  void (async () => {
    for await (const chunk of proc.stderr as ReadableStream<Uint8Array>) {
      if (log.length < 100_000) log += decoder.decode(chunk)
    }
  })()
  void new Response(proc.stdout as ReadableStream<Uint8Array>).text()
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const m = /listening on (http:\/\/[^\s]+)/.exec(log)
    if (m) return { proc, url: (m[1] as string).replace(/\/$/, '') }
    if (proc.exitCode !== null) throw new Error(`hark serve exited ${proc.exitCode}:\n${log}`)
    await Bun.sleep(10)
  }
  proc.kill('SIGKILL')
  throw new Error(`hark serve did not start in 10 s:\n${log}`)
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/** Mixed writes until `stop` says so; records what the server acknowledged. */
async function load(
  url: string,
  agents: { token: string; channel: string }[],
  person: string,
  acked: Acked,
  worker: number,
  stopped: () => boolean,
) {
  const agent = agents[worker % agents.length] as { token: string; channel: string }
  const auth = { authorization: `Bearer ${agent.token}` }
  const json = { ...auth, 'content-type': 'application/json' }
  const post = (path: string, body: unknown, headers: Record<string, string> = json) =>
    fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) })
  let n = 0
  while (!stopped()) {
    n++
    const kind = n % 8
    try {
      if (kind === 0) {
        // A question, then the person's answer.
        const asked = await post('/v1/messages', {
          body: { title: `q ${worker}.${n}`, blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] },
        })
        if (asked.status !== 200) continue
        const { message } = (await asked.json()) as { message: { id: string } }
        acked.messages.set(message.id, '')
        const answered = await post(
          `/v1/app/messages/${message.id}/answer`,
          { answer: true },
          { authorization: `Bearer ${person}`, 'content-type': 'application/json' },
        )
        if (answered.status === 200) {
          await answered.arrayBuffer()
          acked.answers.set(message.id, true)
        }
      } else if (kind === 3) {
        const key = `status-${worker % 3}`
        const text = `pin ${worker}.${n}`
        const at = performance.now()
        const put = await fetch(`${url}/v1/pins/${key}`, {
          method: 'PUT',
          headers: json,
          body: JSON.stringify({ body: { text } }),
        })
        if (put.status === 200) {
          await put.arrayBuffer()
          const id = `${agent.channel}/${key}`
          // Concurrent PUTs to one key: only the latest acknowledgment must be there.
          const previous = acked.pins.get(id)
          if (!previous || previous.at < at) {
            acked.pins.set(id, { channel: agent.channel, key, text, at })
          }
        }
      } else if (kind === 5) {
        const size = 1024 + Math.floor(Math.random() * 256 * 1024)
        const bytes = crypto.getRandomValues(new Uint8Array(size))
        const up = await fetch(`${url}/v1/files?name=crash-${worker}-${n}.bin`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/octet-stream' },
          body: bytes,
        })
        if (up.status === 200) {
          const info = (await up.json()) as { file_id: string; size: number }
          acked.files.set(info.file_id, { sha256: sha256(bytes), size, channel: agent.channel })
        }
      } else {
        const text = `m ${worker}.${n} ${'x'.repeat(n % 200)}`
        const sent = await post('/v1/messages', { body: { text } })
        if (sent.status === 200) {
          const { message } = (await sent.json()) as { message: { id: string } }
          acked.messages.set(message.id, text)
        }
      }
    } catch {
      // The server was killed mid-request: not acknowledged, nothing to expect.
      if (!stopped()) await Bun.sleep(5)
    }
  }
}

/** Checks the database of a killed server, before anything reopens it but this check. */
function checkDatabase(dir: string, acked: Acked, failures: string[], round: number) {
  const db = new Database(join(dir, 'hark.db'), { strict: true })
  try {
    const integrity = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()
    const verdict = integrity.map((r) => r.integrity_check).join('; ')
    if (verdict !== 'ok') failures.push(`round ${round}: integrity_check: ${verdict}`)
    const fk = db.query('PRAGMA foreign_key_check').all()
    if (fk.length > 0) failures.push(`round ${round}: foreign_key_check: ${JSON.stringify(fk)}`)
    // Search (migration 018): every commit indexed what it noted, so no note is left and every
    // live message the view indexes is in the index, however the server was killed.
    const unindexed = db
      .query<{ notes: number; missing: number }, []>(
        `SELECT (SELECT count(*) FROM message_fts_pending) AS notes,
           (SELECT count(*) FROM message_search_text s
            WHERE s.rid NOT IN (SELECT rowid FROM message_fts)) AS missing`,
      )
      .get()
    if (unindexed?.notes || unindexed?.missing) {
      failures.push(`round ${round}: search index behind: ${JSON.stringify(unindexed)}`)
    }
    const message = db.query<
      { body: string | null; ask_status: string | null; answer: string | null },
      [string]
    >('SELECT body, ask_status, answer FROM messages WHERE id = ?1')
    for (const [id, text] of acked.messages) {
      const row = message.get(id)
      if (!row) failures.push(`round ${round}: acknowledged message ${id} is missing`)
      else if (text && !row.body?.includes(JSON.stringify(text).slice(1, -1))) {
        failures.push(`round ${round}: message ${id} lost its text`)
      }
    }
    for (const [id, answer] of acked.answers) {
      const row = message.get(id)
      if (row?.ask_status !== 'answered' || JSON.parse(row.answer ?? 'null') !== answer) {
        failures.push(
          `round ${round}: acknowledged answer of ${id} is missing (${row?.ask_status})`,
        )
      }
    }
    const pin = db.query<{ body: string }, [string, string]>(
      'SELECT body FROM messages WHERE channel_id = ?1 AND pin_key = ?2',
    )
    for (const p of acked.pins.values()) {
      const row = pin.get(p.channel, p.key)
      // A later PUT may have been committed but not acknowledged: the pin is then newer.
      if (!row) failures.push(`round ${round}: acknowledged pin ${p.key} is missing`)
    }
    const file = db.query<{ size: number; sha256: string }, [string]>(
      'SELECT size, sha256 FROM files WHERE id = ?1',
    )
    for (const [id, f] of acked.files) {
      const row = file.get(id)
      if (!row) failures.push(`round ${round}: acknowledged file ${id} is missing`)
      else if (row.sha256 !== f.sha256 || row.size !== f.size) {
        failures.push(`round ${round}: file ${id} recorded with the wrong size or hash`)
      }
    }
    const seq = db
      .query<{ top: number | null; counter: number }, []>(
        "SELECT (SELECT max(seq) FROM messages) AS top, (SELECT value FROM counters WHERE name = 'change_seq') AS counter",
      )
      .get()
    if (seq && (seq.top ?? 0) > seq.counter) {
      failures.push(`round ${round}: change counter ${seq.counter} is behind seq ${seq.top}`)
    }
  } finally {
    db.close()
  }
}

/** After a restart: no partial uploads, no file without a record, every record's file whole. */
function checkFiles(dir: string, failures: string[], round: number) {
  const filesDir = join(dir, 'files')
  const tmp = join(filesDir, '.tmp')
  if (existsSync(tmp) && readdirSync(tmp).length > 0) {
    failures.push(`round ${round}: partial uploads left in files/.tmp: ${readdirSync(tmp).length}`)
  }
  const db = new Database(join(dir, 'hark.db'), { readonly: true, strict: true })
  try {
    const rows = db
      .query<{ id: string; channel_id: string; size: number; sha256: string }, []>(
        'SELECT id, channel_id, size, sha256 FROM files',
      )
      .all()
    const known = new Set(rows.map((r) => `${r.channel_id}/${r.id}`))
    for (const channel of readdirSync(filesDir)) {
      if (channel === '.tmp' || !statSync(join(filesDir, channel)).isDirectory()) continue
      for (const name of readdirSync(join(filesDir, channel))) {
        if (!known.has(`${channel}/${name}`)) {
          failures.push(`round ${round}: orphan file ${channel}/${name}`)
        }
      }
    }
    for (const r of rows) {
      const path = join(filesDir, r.channel_id, r.id)
      if (!existsSync(path)) {
        failures.push(`round ${round}: file ${r.id} has a record but no bytes`)
        continue
      }
      const bytes = readFileSync(path)
      if (bytes.length !== r.size || sha256(bytes) !== r.sha256) {
        failures.push(`round ${round}: file ${r.id} is partial or altered on disk`)
      }
    }
  } finally {
    db.close()
  }
}

export async function crashLoop(options: CrashOptions): Promise<CrashSummary> {
  requireBinary()
  const log = options.log ?? (() => {})
  const { agents, person } = await provisionDir(options.dir, 4)
  const acked: Acked = {
    messages: new Map(),
    answers: new Map(),
    pins: new Map(),
    files: new Map(),
  }
  const failures: string[] = []
  for (let round = 1; round <= options.rounds; round++) {
    const server = await start(options.dir)
    // The restart swept what the last crash left: check the files now.
    if (round > 1) checkFiles(options.dir, failures, round - 1)
    let stopped = false
    const workers = Array.from({ length: options.workers ?? 8 }, (_, w) =>
      load(server.url, agents, person, acked, w, () => stopped),
    )
    const killAfter = options.minMs + Math.random() * (options.maxMs - options.minMs)
    await Bun.sleep(killAfter)
    server.proc.kill('SIGKILL')
    await server.proc.exited
    stopped = true
    await Promise.all(workers)
    checkDatabase(options.dir, acked, failures, round)
    log(
      `round ${round}: killed after ${killAfter.toFixed(0)} ms; acknowledged so far: ` +
        `${acked.messages.size} messages, ${acked.answers.size} answers, ${acked.pins.size} pins, ` +
        `${acked.files.size} files; failures: ${failures.length}`,
    )
  }
  // One last start so the last crash is swept and checked too.
  const last = await start(options.dir)
  checkFiles(options.dir, failures, options.rounds)
  const health = await fetch(`${last.url}/health`).then(
    (r) => r.status,
    () => 0,
  )
  if (health !== 200) failures.push(`final restart: /health answered ${health}`)
  last.proc.kill('SIGTERM')
  await last.proc.exited
  return {
    rounds: options.rounds,
    acked: {
      messages: acked.messages.size,
      answers: acked.answers.size,
      pins: acked.pins.size,
      files: acked.files.size,
    },
    failures,
  }
}
