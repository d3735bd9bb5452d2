import { existsSync, statSync } from 'node:fs'
import { systemClock } from '../../core/clock.ts'
import { UsageError } from '../../core/errors.ts'
import { stderrLogger } from '../../core/log.ts'
import { routedStores } from '../../db/async-stores.ts'
import { databasePath, openDatabase } from '../../db/database.ts'
import { connectPostgres } from '../../db/pg/connect.ts'
import { migratePostgres } from '../../db/pg/migrate.ts'
import { parsePostgresUrl } from '../../db/pg/url.ts'
import { wakeSender } from '../../db/pg/wake-bus.ts'
import { PgWritePath } from '../../db/pg/write-path.ts'
import type { Provisioning } from '../../people/service.ts'
import { directProvisioning } from '../../server/context.ts'
import { prepareDataDir } from '../../server/data-dir.ts'
import { openPgStores, openPgTransaction } from '../../server/pg/stores.ts'
import type { ParsedArgs } from '../args.ts'
import type { Command } from '../command.ts'
import { databaseUrlFrom } from '../settings.ts'

/**
 * One operator command (`hark admin NAME ...`): its `help` is its usage line and its summary the
 * lines under it in `hark admin --help`. It works on the data directory directly.
 */
export type AdminCommand = Command<AdminContext>

export interface AdminContext {
  args: ParsedArgs
  env: Record<string, string | undefined>
  /** One line of the command's report, on stdout. */
  out: (line: string) => void
  /** From --data, HARK_DATA or the config file; checked to be this user's to write. */
  dataDir: string
  /** Whether --data, HARK_DATA or the config file named it (else it is the default, ./data). */
  dataNamed: boolean
}

/**
 * `withDatabase` on the records the command's settings name (HARK_DATABASE_URL, else --data).
 * A data directory without a database is refused: records made in a database no server uses
 * look fine and reach nobody. Only `provisions` (`user add`, a new instance's first person
 * before its first start) makes one, and only where --data, HARK_DATA or the config file names
 * the place, saying so. The schema of Postgres records is made by whoever connects first.
 */
export async function withRecords<T>(
  c: AdminContext,
  work: (p: Provisioning) => T | Promise<T>,
  options: { provisions?: boolean } = {},
): Promise<T> {
  const databaseUrl = databaseUrlFrom(c.args, c.env)
  if (databaseUrl === undefined && !existsSync(databasePath(c.dataDir))) {
    if (!options.provisions || !c.dataNamed) throw noData(c)
    process.stderr.write(
      `hark: no Hark data at ${c.dataDir} yet: making a new database there; start the server with HARK_DATA=${c.dataDir} to use it.\n`,
    )
  }
  return await withDatabase(c.dataDir, work, databaseUrl)
}

function noData(c: AdminContext): UsageError {
  return new UsageError(
    c.dataNamed
      ? `no Hark data at ${c.dataDir} (no hark.db): is the path right? The server makes it at its first start`
      : `no Hark data at ${c.dataDir} (the default, ./data); pass --data DIR or --config FILE (the server's, e.g. /etc/hark/hark.env)`,
  )
}

/**
 * The records, open for `work`, with what the people service needs: the data directory's
 * database, or the shared Postgres one when `databaseUrl` is given (HARK_DATABASE_URL).
 */
export async function withDatabase<T>(
  dataDir: string,
  work: (p: Provisioning) => T | Promise<T>,
  databaseUrl?: string,
): Promise<T> {
  if (databaseUrl !== undefined) return await withPostgres(databaseUrl, work)
  prepareDataDir(dataDir, stderrLogger)
  const db = openDatabase(databasePath(dataDir))
  const p = directProvisioning(db)
  try {
    return await work(p)
  } finally {
    // Every unit the work started has settled before the file is closed.
    await p.writes.close()
    db.close()
  }
}

/**
 * Run as root on a data directory someone else owns (the `hark` service user), an admin command
 * would leave root-owned files the server cannot open. Refuse, saying how to run it instead.
 */
export function refuseForeignRoot(dataDir: string, command = 'hark admin ...'): void {
  if (process.getuid?.() !== 0) return
  let owner: number
  try {
    owner = statSync(dataDir).uid
  } catch {
    return
  }
  if (owner !== 0) {
    throw new UsageError(
      `${dataDir} belongs to uid ${owner}, not root: run this as that user (sudo -u hark ${command})`,
    )
  }
}

/**
 * `work` on the shared Postgres database: migrated first (as a server starting would), the
 * stores' twins, a write path that sends its wake-ups to the running instances.
 */
async function withPostgres<T>(url: string, work: (p: Provisioning) => T | Promise<T>): Promise<T> {
  const sql = await connectPostgres(parsePostgresUrl(url), 2)
  try {
    await migratePostgres(sql)
    const writes = new PgWritePath(sql, { wake() {} }, stderrLogger, {
      bus: wakeSender('admin'),
      stores: openPgTransaction,
    })
    const store = routedStores(openPgStores(sql), writes)
    try {
      return await work({ store, writes, clock: systemClock })
    } finally {
      await writes.close()
    }
  } finally {
    await sql.close({ timeout: 5 })
  }
}
