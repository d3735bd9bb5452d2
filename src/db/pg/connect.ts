import { SQL } from 'bun'
import { FatalError } from '../../core/errors.ts'
import type { PostgresLocation } from './url.ts'

const CONNECT_SECONDS = 10

/**
 * A pool on the database, proved usable by a first query, so an unreachable server or a refused
 * login is said plainly, at once (Bun's messages name the host and the failure, never the
 * password; the URL is shown masked).
 */
export async function connectPostgres(pg: PostgresLocation, max: number): Promise<SQL> {
  const sql = new SQL(pg.url, { max, connectionTimeout: CONNECT_SECONDS })
  try {
    await sql`SELECT 1`
    return sql
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {})
    throw new FatalError(`cannot use ${pg.masked}: ${(error as Error).message}`)
  }
}
