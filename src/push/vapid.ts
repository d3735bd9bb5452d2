import { chmodSync, linkSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { SQL } from 'bun'
import webpush from 'web-push'
import { replaceFileSynced, syncFolderNow, writeFileSynced } from '../core/durable-files.ts'
import { randomBase62 } from '../core/ids.ts'
import { pgVapidRow, type VapidRow } from './pg-vapid-store.ts'

/**
 * The server's VAPID key pair: it signs every push (push services tie a subscription to the
 * public key it was made with), so it is made once, at first start, and kept in the data
 * directory, readable by the server's user only. Rotating it voids every subscription.
 * Instances on one Postgres (issue 20) share one pair instead: the `vapid_keys` row (schema 14),
 * below; on SQLite the file is the only place the keys live.
 */
export interface VapidKeys {
  publicKey: string
  privateKey: string
  created_at: number
}

export const vapidFile = (dataDir: string) => join(dataDir, 'vapid.json')

const generate = (): VapidKeys => ({ ...webpush.generateVAPIDKeys(), created_at: Date.now() })

const keysText = (keys: VapidKeys) => `${JSON.stringify(keys, null, 2)}\n`

/** Writes the keys to a 0600 temporary file beside the real one; returns its path. */
function writeTemp(dataDir: string, keys: VapidKeys): string {
  const temp = join(dataDir, `.vapid-${randomBase62(8)}.tmp`)
  // Synced before it is linked into place: else a power cut could leave vapid.json empty, and
  // the server would not start (core/durable-files.ts).
  writeFileSynced(temp, keysText(keys), { mode: 0o600, flag: 'wx' })
  chmodSync(temp, 0o600) // the umask cannot widen it, but an odd one could narrow the owner's bits
  return temp
}

/**
 * The keys, made on first use. Creation links the finished file into place, which fails if
 * it exists: the server and an admin command starting together still agree on one pair.
 */
export function loadOrCreateVapid(dataDir: string): VapidKeys {
  const file = vapidFile(dataDir)
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as VapidKeys
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const temp = writeTemp(dataDir, generate())
  try {
    linkSync(temp, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    rmSync(temp, { force: true })
  }
  syncFolderNow(dataDir)
  return JSON.parse(readFileSync(file, 'utf8')) as VapidKeys
}

/** The data directory's keys, or undefined when it has none (`hark admin migrate-to`). */
export function readVapid(dataDir: string): VapidKeys | undefined {
  let text: string
  try {
    text = readFileSync(vapidFile(dataDir), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const keys = JSON.parse(text) as VapidKeys
  if (!validVapid(keys)) throw new Error(`${vapidFile(dataDir)} holds no VAPID key pair`)
  return keys
}

/** A P-256 pair as web-push writes it: a 65-byte public point, a 32-byte private scalar. */
export function validVapid(keys: Partial<VapidKeys> | null | undefined): keys is VapidKeys {
  const bytes = (k: unknown) =>
    typeof k === 'string' && /^[A-Za-z0-9_-]+$/.test(k) ? Buffer.from(k, 'base64url').length : -1
  return (
    bytes(keys?.publicKey) === 65 &&
    bytes(keys?.privateKey) === 32 &&
    typeof keys?.created_at === 'number' &&
    Number.isFinite(keys.created_at)
  )
}

/** `hark admin vapid rotate`: a new pair replaces the old one atomically. */
export function rotateVapid(dataDir: string): VapidKeys {
  const keys = generate()
  replaceFileSynced(vapidFile(dataDir), keysText(keys), 0o600)
  return keys
}

// On Postgres: the one `vapid_keys` row (id 1) every instance signs with.

const fromRow = (row: VapidRow): VapidKeys => ({
  publicKey: row.public_key,
  privateKey: row.private_key,
  created_at: row.created_at,
})

const toRow = (keys: VapidKeys): VapidRow => ({
  public_key: keys.publicKey,
  private_key: keys.privateKey,
  created_at: keys.created_at,
})

/** The database's keys, or undefined when no instance has made them yet. */
export async function readVapidIn(sql: SQL): Promise<VapidKeys | undefined> {
  const row = await pgVapidRow(sql).read()
  return row ? fromRow(row) : undefined
}

/**
 * The database's keys, made on first use: a fresh pair is inserted unless the row exists, then
 * the row is read back, so instances starting together all end up with the one that won.
 */
export async function loadOrCreateVapidIn(sql: SQL): Promise<VapidKeys> {
  const held = await readVapidIn(sql)
  if (held) return held
  await pgVapidRow(sql).insertIfAbsent(toRow(generate()))
  const made = await readVapidIn(sql)
  if (!made) throw new Error('vapid_keys: the row inserted a moment ago is gone')
  return made
}

/**
 * Puts `keys` in the row, replacing any pair there: `hark admin vapid rotate` (a new pair) and
 * `hark admin migrate-to` (the data directory's pair). Pass a transaction to do it with more.
 */
export async function storeVapidIn(sql: SQL, keys: VapidKeys): Promise<VapidKeys> {
  await pgVapidRow(sql).put(toRow(keys))
  return keys
}

/** `hark admin vapid rotate` on Postgres: a new pair replaces the row's (or is its first). */
export const rotateVapidIn = (sql: SQL): Promise<VapidKeys> => storeVapidIn(sql, generate())

/** How often a holder on the database re-reads the row by default. */
export const VAPID_REFRESH_MS = 15_000

export interface VapidDatabaseOptions {
  /** Re-read the row this often (ms), so a rotation elsewhere reaches this instance. */
  refreshMs?: number
}

/** Where a holder's keys live: the data directory's vapid.json, or the database's row. */
type Source = { dataDir: string } | { sql: SQL }

/**
 * The keys as the running server sees them, read synchronously whenever a push is signed.
 *
 * From the data directory (`new VapidHolder(dataDir)`, SQLite): re-read when the file changes,
 * so a rotation by the admin command (while the server runs) takes effect without a restart.
 *
 * From the database (`await VapidHolder.fromDatabase(sql)`, instances on Postgres): loaded
 * before first use (made if no instance has yet), then re-read every `refreshMs` (15 s) in the
 * background, and whenever `refresh()` is called, so a rotation by any process reaches every
 * instance within that. `close()` stops the re-reading (the worker's `stop` calls it).
 */
export class VapidHolder {
  private keys: VapidKeys
  private stamp = ''
  private readonly source: Source
  private headers = new Map<string, { value: string; until: number }>()
  private timer?: ReturnType<typeof setInterval>
  private reading?: Promise<VapidKeys>

  constructor(dataDir: string)
  /** Use `VapidHolder.fromDatabase`, which loads the keys first. */
  constructor(source: { sql: SQL; keys: VapidKeys; refreshMs?: number })
  constructor(from: string | { sql: SQL; keys: VapidKeys; refreshMs?: number }) {
    if (typeof from === 'string') {
      this.source = { dataDir: from }
      this.keys = loadOrCreateVapid(from)
      this.stamp = this.fileStamp()
      return
    }
    this.source = { sql: from.sql }
    this.keys = from.keys
    const every = from.refreshMs ?? VAPID_REFRESH_MS
    if (every > 0 && Number.isFinite(every)) {
      this.timer = setInterval(() => {
        // A failed read (the database briefly away) keeps the keys held; the next one retries.
        this.refresh().catch(() => {})
      }, every)
      this.timer.unref?.()
    }
  }

  /** The holder of the database's pair, loaded (made if no instance has yet) before it returns. */
  static async fromDatabase(sql: SQL, options: VapidDatabaseOptions = {}): Promise<VapidHolder> {
    const keys = await loadOrCreateVapidIn(sql)
    return new VapidHolder({ sql, keys, refreshMs: options.refreshMs })
  }

  private fileStamp(): string {
    if (!('dataDir' in this.source)) return ''
    try {
      const s = statSync(vapidFile(this.source.dataDir))
      return `${s.mtimeMs}:${s.size}:${s.ino}`
    } catch {
      return ''
    }
  }

  /** Takes `keys` as the current pair; signed headers of another pair are forgotten. */
  private hold(keys: VapidKeys): VapidKeys {
    if (keys.publicKey !== this.keys.publicKey || keys.privateKey !== this.keys.privateKey) {
      this.headers.clear()
    }
    this.keys = keys
    return keys
  }

  current(): VapidKeys {
    if ('dataDir' in this.source) {
      const stamp = this.fileStamp()
      if (stamp !== this.stamp) {
        this.keys = loadOrCreateVapid(this.source.dataDir)
        this.stamp = this.fileStamp()
        this.headers.clear()
      }
    }
    return this.keys
  }

  /**
   * Reads the keys again now (the file when it changed; the database's row, made again if it
   * was deleted) and returns them. Reads asked for together share one query.
   */
  async refresh(): Promise<VapidKeys> {
    if ('dataDir' in this.source) return this.current()
    const { sql } = this.source
    this.reading ??= loadOrCreateVapidIn(sql)
      .then((keys) => this.hold(keys))
      .finally(() => {
        this.reading = undefined
      })
    return await this.reading
  }

  /** Stops re-reading the database's row (nothing to stop for the file). Safe to call twice. */
  close(): void {
    clearInterval(this.timer)
    this.timer = undefined
  }

  /**
   * The `Authorization` header for one push service. Signing a JWT per push is wasted work;
   * one is valid 12 hours, so it is reused for an hour per push service (the audience).
   */
  authorization(endpoint: string, subject: string, now = Date.now()): string {
    const keys = this.current()
    const audience = new URL(endpoint).origin
    const cached = this.headers.get(audience)
    if (cached && cached.until > now) return cached.value
    const { Authorization } = webpush.getVapidHeaders(
      audience,
      subject,
      keys.publicKey,
      keys.privateKey,
      'aes128gcm',
      Math.floor(now / 1000) + 12 * 3600,
    )
    this.headers.set(audience, { value: Authorization, until: now + 3600_000 })
    return Authorization
  }
}
