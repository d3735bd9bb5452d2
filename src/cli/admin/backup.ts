/**
 * `hark admin backup FILE` and `hark admin restore FILE`.
 *
 * A backup is a tar archive: `hark.db` (a consistent snapshot made with `VACUUM INTO`, never a
 * copy of the live file), `files/<channel>/<file>` for every file that snapshot records, and
 * `vapid.json` (the push signing keys: push services bind every subscription to them, so a
 * restore without them would leave every device silently dead), and `manifest.json` with the
 * size and SHA-256 of every entry. It is safe while the server runs: the snapshot is one read
 * transaction, stored files never change once recorded, and the keys are read before and after
 * the snapshot (a rotation in between makes the backup start over). The server's own secret keys
 * (`server_keys`) are left out: a restored server makes new ones, and the ceremonies and email
 * codes in flight when the backup was made simply start again (docs/decisions.md, "Server keys").
 */
import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { syncFolder } from '../../core/durable-files.ts'
import { FatalError } from '../../core/errors.ts'
import { VERSION } from '../../core/version.ts'
import { SchemaTooNewError } from '../../db/database.ts'
import { latestVersion } from '../../db/migrations/index.ts'
import { vapidFile } from '../../push/vapid.ts'
import {
  dropServerKeys,
  dropSubscriptions,
  fileRecords,
  integrityOf,
  snapshotInto,
} from './backup-store.ts'
import { readTar, TarWriter } from './tar.ts'

export class BackupError extends FatalError {}

export const BACKUP_FORMAT = 'hark-backup'
/** 2: adds `vapid.json`. Format 1 backups (no keys) still restore. */
export const BACKUP_FORMAT_VERSION = 2
const DB_NAME = 'hark.db'
const VAPID_NAME = 'vapid.json'
const MANIFEST = 'manifest.json'
/** A file recorded in the snapshot may vanish (its channel was deleted, then swept): try again. */
const ATTEMPTS = 5

export interface ManifestEntry {
  path: string
  size: number
  sha256: string
}

export interface Manifest {
  format: typeof BACKUP_FORMAT
  format_version: number
  hark_version: string
  schema_version: number
  created_at: number
  database: ManifestEntry
  /** Absent in format 1 backups, and when the data directory had no keys yet. */
  vapid?: ManifestEntry
  files: ManifestEntry[]
}

const sha256File = async (path: string): Promise<string> => {
  const hash = createHash('sha256')
  for await (const chunk of Bun.file(path).stream()) hash.update(chunk)
  return hash.digest('hex')
}

/** `PRAGMA integrity_check` on a copy of the database; throws unless it says "ok". */
function checkIntegrity(path: string): number {
  const { problems, schema } = integrityOf(path)
  if (problems.length > 0) {
    throw new BackupError(`${path} failed the integrity check: ${problems.slice(0, 5).join('; ')}`)
  }
  return schema
}

class Vanished extends Error {}

/** The VAPID key file's bytes, or undefined when the server never made one. */
function readVapid(dataDir: string): Buffer | undefined {
  try {
    return readFileSync(vapidFile(dataDir))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** Throws unless `bytes` is a VAPID key file (JSON with both keys). */
function checkVapid(bytes: Buffer, where: string): void {
  let keys: { publicKey?: unknown; privateKey?: unknown }
  try {
    keys = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw new BackupError(`${where} is not valid JSON`)
  }
  if (typeof keys?.publicKey !== 'string' || typeof keys.privateKey !== 'string') {
    throw new BackupError(`${where} does not hold a VAPID key pair`)
  }
}

const sha256Bytes = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

/**
 * Writes a backup of `dataDir` to `outFile` (which must not exist). The archive is written
 * under a temporary name, synced and linked into place, so `outFile` is either complete or absent.
 */
export async function backup(dataDir: string, outFile: string): Promise<Manifest> {
  const live = join(dataDir, DB_NAME)
  if (!existsSync(live)) throw new BackupError(`no database at ${live}: is --data right?`)
  const out = resolve(outFile)
  if (existsSync(out)) throw new BackupError(`${out} already exists; choose a new file name`)
  // The backups folder of a fresh install does not exist yet: made as private as the data.
  mkdirSync(dirname(out), { recursive: true, mode: 0o700 })
  const work = mkdtempSync(join(dirname(out), `.${basename(out)}.`))
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await backupOnce(dataDir, out, work)
      } catch (error) {
        if (!(error instanceof Vanished) || attempt >= ATTEMPTS) throw error
        rmSync(join(work, DB_NAME), { force: true })
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

async function backupOnce(dataDir: string, out: string, work: string): Promise<Manifest> {
  const snap = join(work, DB_NAME)
  const keys = readVapid(dataDir)
  snapshotInto(join(dataDir, DB_NAME), snap)
  // `hark admin vapid rotate` between the two reads: the snapshot may hold subscriptions made
  // under either pair, so take both again.
  const keysAfter = readVapid(dataDir)
  if (keys === undefined ? keysAfter !== undefined : !keysAfter || !keys.equals(keysAfter)) {
    throw new Vanished(`${VAPID_NAME} changed during the backup`)
  }
  if (keys) checkVapid(keys, vapidFile(dataDir))
  dropServerKeys(snap)
  const vapid: ManifestEntry | undefined = keys && {
    path: VAPID_NAME,
    size: keys.length,
    sha256: sha256Bytes(keys),
  }
  const schema = checkIntegrity(snap)
  const records = fileRecords(snap)
  const database: ManifestEntry = {
    path: DB_NAME,
    size: statSync(snap).size,
    sha256: await sha256File(snap),
  }
  const partial = join(work, 'archive.tar')
  const handle = await open(partial, 'wx', 0o600)
  const files: ManifestEntry[] = []
  try {
    const tar = new TarWriter(handle)
    const dbHandle = await open(snap, 'r')
    try {
      await tar.addFile(DB_NAME, dbHandle, database.size, Date.now())
    } finally {
      await dbHandle.close()
    }
    if (keys) await tar.addBytes(VAPID_NAME, keys)
    for (const f of records) {
      const path = `files/${f.channel_id}/${f.id}`
      let source: FileHandle
      try {
        source = await open(join(dataDir, path), 'r')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Vanished(path)
        throw error
      }
      try {
        const stat = await source.stat()
        if (stat.size !== f.size) {
          throw new BackupError(`${path} has ${stat.size} bytes on disk but ${f.size} recorded`)
        }
        const sha256 = await tar.addFile(path, source, f.size, stat.mtimeMs)
        if (sha256 !== f.sha256) {
          throw new BackupError(`${path} does not match its recorded SHA-256 (damaged on disk?)`)
        }
        files.push({ path, size: f.size, sha256 })
      } finally {
        await source.close()
      }
    }
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      format_version: BACKUP_FORMAT_VERSION,
      hark_version: VERSION,
      schema_version: schema,
      created_at: Date.now(),
      database,
      ...(vapid && { vapid }),
      files,
    }
    await tar.addBytes(MANIFEST, new TextEncoder().encode(`${JSON.stringify(manifest, null, 2)}\n`))
    await tar.finish()
    await handle.sync()
    await handle.close()
    // A hard link never replaces a file: of two backups racing for one name (the daily timer
    // and one by hand in the same second) the second is refused, not written over the first.
    try {
      linkSync(partial, out)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new BackupError(`${out} already exists; choose a new file name`)
      }
      throw error
    }
    await syncFolder(dirname(out))
    return manifest
  } catch (error) {
    await handle.close().catch(() => {})
    throw error
  }
}

/** Only names a backup can hold; anything else (`..`, absolute paths) is refused. */
const ENTRY =
  /^(hark\.db|manifest\.json|vapid\.json|files\/[A-Za-z0-9_-]{1,64}\/[A-Za-z0-9_-]{1,64})$/

/**
 * Restores a backup into `dataDir`, which must be empty or absent. Every entry is checked
 * against the manifest (size and SHA-256), the database by `PRAGMA integrity_check`, and the
 * database's file records against the files; only then is anything moved into place.
 */
export async function restore(archive: string, dataDir: string): Promise<Manifest> {
  const source = resolve(archive)
  if (!existsSync(source)) throw new BackupError(`${source} does not exist`)
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0) {
    throw new BackupError(
      `${dataDir} is not empty; restore only into an empty or new data directory (stop the server, move the old one aside)`,
    )
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const staging = mkdtempSync(join(dataDir, '.restore-'))
  try {
    const seen = new Map<string, ManifestEntry>()
    let manifestText = ''
    const input = await open(source, 'r')
    try {
      await readTar(input, async ({ name, size }) => {
        if (!ENTRY.test(name)) throw new BackupError(`unexpected entry "${name}" in the backup`)
        if (seen.has(name)) throw new BackupError(`entry "${name}" appears twice in the backup`)
        if (name === MANIFEST) {
          if (size > 64 * 1024 * 1024) throw new BackupError('manifest.json is too large')
          const parts: Uint8Array[] = []
          return {
            chunk: async (b) => void parts.push(b.slice()),
            end: async () => {
              manifestText = Buffer.concat(parts).toString('utf8')
              seen.set(name, { path: name, size, sha256: '' })
            },
          }
        }
        const dest = join(staging, name)
        mkdirSync(dirname(dest), { recursive: true, mode: 0o700 })
        const out = await open(dest, 'wx', 0o600)
        const hash = createHash('sha256')
        let position = 0
        return {
          chunk: async (b) => {
            hash.update(b)
            let done = 0
            while (done < b.length) {
              const { bytesWritten } = await out.write(b, done, b.length - done, position)
              done += bytesWritten
              position += bytesWritten
            }
          },
          end: async () => {
            await out.sync()
            await out.close()
            seen.set(name, { path: name, size, sha256: hash.digest('hex') })
          },
        }
      })
    } catch (error) {
      if (error instanceof BackupError) throw error
      throw new BackupError(`${source} is not a readable Hark backup: ${(error as Error).message}`)
    } finally {
      await input.close()
    }
    const manifest = verify(manifestText, seen, staging)
    if (manifest.vapid) {
      const keys = join(dataDir, VAPID_NAME)
      renameSync(join(staging, VAPID_NAME), keys)
      chmodSync(keys, 0o600) // the server's signing key: its user's alone, whatever the umask
    } else {
      // No keys in the backup (an older hark made it): the first start makes new ones, under
      // which no restored subscription works. Drop them, as `hark admin vapid rotate` does.
      dropSubscriptions(join(staging, DB_NAME))
    }
    renameSync(join(staging, DB_NAME), join(dataDir, DB_NAME))
    if (existsSync(join(staging, 'files')))
      renameSync(join(staging, 'files'), join(dataDir, 'files'))
    rmSync(staging, { recursive: true, force: true })
    await syncFolder(dataDir)
    return manifest
  } catch (error) {
    // Leave the directory as empty as we found it.
    for (const name of readdirSync(dataDir))
      rmSync(join(dataDir, name), { recursive: true, force: true })
    throw error
  }
}

function verify(manifestText: string, seen: Map<string, ManifestEntry>, staging: string): Manifest {
  if (!manifestText) throw new BackupError('the backup has no manifest.json')
  let manifest: Manifest
  try {
    manifest = JSON.parse(manifestText) as Manifest
  } catch {
    throw new BackupError('manifest.json is not valid JSON')
  }
  if (manifest.format !== BACKUP_FORMAT || !Array.isArray(manifest.files) || !manifest.database) {
    throw new BackupError('manifest.json is not a Hark backup manifest')
  }
  if (manifest.format_version > BACKUP_FORMAT_VERSION) {
    throw new BackupError(
      `the backup has format ${manifest.format_version}, newer than this hark reads (${BACKUP_FORMAT_VERSION}); use a newer hark`,
    )
  }
  if (manifest.vapid && manifest.vapid.path !== VAPID_NAME) {
    throw new BackupError('manifest.json is not a Hark backup manifest')
  }
  const expected = [
    manifest.database,
    ...(manifest.vapid ? [manifest.vapid] : []),
    ...manifest.files,
  ]
  for (const e of expected) {
    const got = seen.get(e.path)
    if (!got) throw new BackupError(`${e.path} is listed in the manifest but missing`)
    if (got.size !== e.size || got.sha256 !== e.sha256) {
      throw new BackupError(`${e.path} does not match its checksum in the manifest`)
    }
  }
  if (seen.size !== expected.length + 1) {
    const extra = [...seen.keys()].filter(
      (k) => k !== MANIFEST && !expected.some((e) => e.path === k),
    )
    throw new BackupError(
      `the backup holds entries the manifest does not list: ${extra.join(', ')}`,
    )
  }
  if (manifest.vapid) checkVapid(readFileSync(join(staging, VAPID_NAME)), VAPID_NAME)
  const db = join(staging, DB_NAME)
  const schema = checkIntegrity(db)
  if (schema > latestVersion) throw new SchemaTooNewError(schema, latestVersion)
  const recorded = fileRecords(db)
  const listed = new Map(manifest.files.map((f) => [f.path, f]))
  if (recorded.length !== listed.size) {
    throw new BackupError(
      `the database records ${recorded.length} files but the backup holds ${listed.size}`,
    )
  }
  for (const r of recorded) {
    const f = listed.get(`files/${r.channel_id}/${r.id}`)
    if (!f || f.sha256 !== r.sha256 || f.size !== r.size) {
      throw new BackupError(`file ${r.channel_id}/${r.id} in the database is missing or differs`)
    }
  }
  return manifest
}
