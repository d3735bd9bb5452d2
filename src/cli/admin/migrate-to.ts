import { existsSync } from 'node:fs'
import { SQL } from 'bun'
import { FatalError, UsageError } from '../../core/errors.ts'
import { databasePath } from '../../server/context.ts'
import { openDatabase } from '../../server/db/database.ts'
import { copyToPostgres } from '../../server/db/pg/copy.ts'
import { migratePostgres } from '../../server/db/pg/migrate.ts'
import {
  POSTGRES_URL_FORM,
  type PostgresLocation,
  parsePostgresUrl,
} from '../../server/db/pg/url.ts'
import { databaseUrlFrom } from '../settings.ts'
import type { AdminCommand } from './command.ts'

/** A server that does not answer in this long is reported, not waited on. */
const CONNECT_SECONDS = 10

function location(raw: string | undefined): PostgresLocation {
  if (raw === undefined) {
    throw new UsageError(
      `hark admin migrate-to needs --database-url (or HARK_DATABASE_URL): ${POSTGRES_URL_FORM}`,
    )
  }
  try {
    return parsePostgresUrl(raw)
  } catch (error) {
    throw new UsageError(
      `--database-url: ${(error as Error).message}; the form is ${POSTGRES_URL_FORM}`,
    )
  }
}

/** The first query, so an unreachable server or a refused login is said plainly. */
async function connect(pg: PostgresLocation): Promise<SQL> {
  const sql = new SQL(pg.url, { max: 1, connectionTimeout: CONNECT_SECONDS })
  try {
    await sql`SELECT 1`
    return sql
  } catch (error) {
    await sql.close().catch(() => {})
    // Bun's messages name the host and the failure, never the password.
    throw new FatalError(`cannot use ${pg.masked}: ${(error as Error).message}`)
  }
}

export const migrateTo: AdminCommand = {
  name: 'migrate-to',
  summary: `copies every record into an empty Postgres database (schema made there first) and
verifies the counts table by table; stop the server first: what it writes after the copy's
snapshot stays behind`,
  help: 'hark admin migrate-to --database-url URL [--data DIR]',
  valued: ['data', 'config', 'database-url'],
  async run(c) {
    if (c.args.positionals.length > 0)
      throw new UsageError('usage: hark admin migrate-to --database-url URL')
    const pg = location(databaseUrlFrom(c.args, c.env))
    const file = databasePath(c.dataDir)
    if (!existsSync(file)) throw new UsageError(`${c.dataDir} holds no Hark database (${file})`)
    const db = openDatabase(file)
    const sql = await connect(pg).catch((error) => {
      db.close()
      throw error
    })
    try {
      const { to } = await migratePostgres(sql)
      c.out(`Copying ${file} into ${pg.masked} (schema ${to}):`)
      const tables = await copyToPostgres(db, sql, to, (t) => c.out(`  ${t.table}: ${t.copied}`))
      const records = tables.reduce((n, t) => n + t.copied, 0)
      c.out(
        `Copied ${records} records in ${tables.length} tables; every table's count verified in Postgres.`,
      )
      c.out(
        `Files stay in ${c.dataDir}/files: instances on Postgres keep them in S3 (docs/scaling.md).`,
      )
      return 0
    } finally {
      await sql.close()
      db.close()
    }
  },
}
