/**
 * `--database-url` / `HARK_DATABASE_URL`: the Postgres database, as libpq's URL form
 *
 *   postgres://USER:PASSWORD@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require]
 *   postgres://USER:PASSWORD@localhost[:PORT]/DATABASE?host=/run/postgresql   (a Unix socket)
 *
 * Only the parsing lives here (no Bun, no I/O), so a bad URL is refused before anything is
 * opened, and errors and reports show the URL with its password masked.
 */
import { UsageError } from '../../core/errors.ts'
import { serviceUrl } from '../../core/service-url.ts'

export interface PostgresLocation {
  /** The URL as given (trimmed): what the client connects with. */
  url: string
  /** The same URL with the password replaced by `***`, for logs and reports. */
  masked: string
  host: string
  database: string
}

export const POSTGRES_URL_FORM =
  'postgres://USER:PASSWORD@HOST[:PORT]/DATABASE[?sslmode=...|?host=/SOCKET/DIRECTORY]'

const SSL_MODES = new Set(['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'])

/** Throws an `Error` saying what is wrong; the message never repeats the password. */
export function parsePostgresUrl(raw: string): PostgresLocation {
  const text = raw.trim()
  const url = serviceUrl(text, ['postgres', 'postgresql'])
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''))
  if (database === '' || database.includes('/')) throw new Error('it names no database')
  for (const [key, value] of url.searchParams) {
    if (key === 'host') {
      // libpq's form of a Unix-domain socket: the directory of the server's socket, whose
      // file is .s.PGSQL.<port> there (the URL's port, 5432 by default). On one machine it
      // spares both sides the TCP stack (docs/scaling.md).
      if (!value.startsWith('/')) {
        throw new Error(`host "${value}" must be the absolute path of a socket's directory`)
      }
      continue
    }
    if (key !== 'sslmode') throw new Error(`unknown parameter "${key}"`)
    if (!SSL_MODES.has(value)) throw new Error(`sslmode "${value}" is not one of libpq's modes`)
  }
  const masked = new URL(text)
  if (masked.password !== '') masked.password = '***'
  return { url: text, masked: masked.toString(), host: url.host, database }
}

/**
 * The setting's parser (src/cli/settings.ts): checked as it is read, so a bad URL stops
 * `hark serve` (or `hark admin migrate-to`) before anything is opened. Empty means unset.
 */
export function databaseUrlSetting(raw: string, flag: string): string | undefined {
  if (raw.trim() === '') return undefined
  try {
    parsePostgresUrl(raw)
  } catch (error) {
    throw new UsageError(`--${flag}: ${(error as Error).message}; the form is ${POSTGRES_URL_FORM}`)
  }
  return raw.trim()
}
