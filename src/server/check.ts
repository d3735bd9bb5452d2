import { Database } from 'bun:sqlite'
import { accessSync, constants, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Config } from '../core/config.ts'
import { FatalError } from '../core/errors.ts'
import { databasePath, openDatabase, SchemaTooNewError, schemaVersion } from '../db/database.ts'
import { latestVersion } from '../db/migrations/index.ts'

/**
 * `hark serve --check`: would this binary start on these settings and this data? The config has
 * been resolved (a bad setting is refused before this runs); here the data is opened and the
 * schema upgrade the server would make at start is tried, on a copy, without writing to the
 * live database or taking its write lock (the running server is left alone). install.sh runs it
 * with a new binary before putting it in place, on every init system: a binary that fails it is
 * never installed. Returns the lines to print; throws a `FatalError` saying what is wrong.
 */
export async function checkServe(
  config: Config,
  configFile: string | undefined,
): Promise<string[]> {
  const lines = [`config: ${configFile ?? '(no file: flags, environment and defaults)'}`]
  if (config.databaseUrl !== undefined) lines.push(await checkPostgres(config.databaseUrl))
  else lines.push(checkSqlite(config.dataDir))
  return lines
}

function checkSqlite(dataDir: string): string {
  if (!existsSync(dataDir)) {
    return `data: ${dataDir} does not exist yet; the server makes it at its first start`
  }
  try {
    accessSync(dataDir, constants.R_OK | constants.W_OK | constants.X_OK)
  } catch (error) {
    throw new FatalError(
      `the data directory ${dataDir} is not readable and writable by this user (${(error as NodeJS.ErrnoException).code ?? error}); run the check as the server's user (sudo -u hark ...), or fix its owner`,
    )
  }
  const file = databasePath(dataDir)
  if (!existsSync(file)) return `data: ${dataDir}, no database yet; the server makes it at start`
  let found: number
  try {
    const db = new Database(file, { readonly: true, strict: true })
    try {
      found = schemaVersion(db)
      // Reading a table proves the file is a database, not only that its header says so.
      db.query('SELECT count(*) FROM sqlite_schema').get()
    } finally {
      db.close()
    }
  } catch (error) {
    throw new FatalError(`cannot read the database ${file}: ${(error as Error).message}`)
  }
  if (found > latestVersion) throw new SchemaTooNewError(found, latestVersion)
  if (found === latestVersion) return `data: ${file}, schema ${found} (this hark's)`
  return `data: ${file}, schema ${found}; the upgrade to ${latestVersion} applies cleanly (tried on a copy: ${tryUpgrade(file)})`
}

/** Runs the migrations on a snapshot in the data directory (its filesystem has the room). */
function tryUpgrade(file: string): string {
  const dir = mkdtempSync(join(dirname(file), '.check-'))
  try {
    const copy = join(dir, 'hark.db')
    const live = new Database(file, { readonly: true, strict: true })
    try {
      live.query('VACUUM INTO ?').run(copy)
    } finally {
      live.close()
    }
    const started = performance.now()
    try {
      openDatabase(copy).close()
    } catch (error) {
      throw new FatalError(
        `the database's upgrade to schema ${latestVersion} fails: ${(error as Error).message}`,
      )
    }
    return `${Math.round(performance.now() - started)} ms`
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function checkPostgres(url: string): Promise<string> {
  const { connectPostgres } = await import('../db/pg/connect.ts')
  const { pgSchemaVersion } = await import('../db/pg/migrate.ts')
  const { pgMigrations } = await import('../db/pg/migrations/index.ts')
  const { parsePostgresUrl } = await import('../db/pg/url.ts')
  const pg = parsePostgresUrl(url)
  const sql = await connectPostgres(pg, 1)
  try {
    const found = await pgSchemaVersion(sql)
    const latest = pgMigrations.at(-1)?.version ?? 0
    if (found > latest) throw new SchemaTooNewError(found, latest)
    const upgrade = found < latest ? `; the server upgrades it to ${latest} at start` : ''
    return `data: ${pg.masked}, schema ${found}${upgrade}`
  } finally {
    await sql.close()
  }
}
