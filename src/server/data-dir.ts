import { accessSync, chmodSync, constants, mkdirSync, readdirSync, statSync } from 'node:fs'
import { FatalError } from '../core/errors.ts'
import type { Logger } from '../core/log.ts'

export class DataDirError extends FatalError {}

/**
 * What Hark itself keeps in a data directory: the database and its WAL files, the files'
 * folder, the VAPID keys, the setup token, and the temporaries of writing the keys and of a
 * restore. A directory holding only these (or nothing) is Hark's to tighten.
 */
const OWN_NAMES = new Set([
  'hark.db',
  'hark.db-wal',
  'hark.db-shm',
  'hark.db-journal',
  'files',
  'vapid.json',
  'setup-token',
])
const OWN_PREFIXES = ['.vapid-', '.restore-']
const isOwn = (name: string) =>
  OWN_NAMES.has(name) || OWN_PREFIXES.some((prefix) => name.startsWith(prefix))

/**
 * Creates the data directory if needed (0700) and proves it writable, with a clear error if
 * not. One that already existed and that other users can read (`mkdir d` leaves 0755) is made
 * 0700 when Hark owns it (this user's, holding nothing but Hark's files); otherwise it is the
 * operator's, left as it is, and a warning says so. Its files are 0600 either way (the
 * database: openDatabase), so what such a directory still shows others is names and sizes.
 */
export function prepareDataDir(dataDir: string, log: Pick<Logger, 'info' | 'warn'>): void {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 })
    accessSync(dataDir, constants.W_OK | constants.R_OK)
  } catch (error) {
    throw new DataDirError(
      `data directory ${dataDir} is not writable (${(error as NodeJS.ErrnoException).code ?? error}); ` +
        'choose another with --data or HARK_DATA, or fix its owner',
    )
  }
  const { mode, uid } = statSync(dataDir)
  if ((mode & 0o077) === 0) return
  const shown = (mode & 0o777).toString(8).padStart(4, '0')
  if (uid === process.getuid?.() && readdirSync(dataDir).every(isOwn)) {
    chmodSync(dataDir, 0o700)
    log.info(`data directory ${dataDir} was open to other users (mode ${shown}); made it 0700`)
    return
  }
  log.warn(
    `data directory ${dataDir} is open to other users (mode ${shown}) and holds files that are ` +
      `not Hark's, so it is left as it is; Hark's own files in it are 0600, but other users can ` +
      `list their names and sizes: run "chmod 700 ${dataDir}" if it should be private`,
  )
}
