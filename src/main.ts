#!/usr/bin/env bun
import { ADMIN_HELP, admin } from './cli/admin.ts'
import { parseArgs, UsageError } from './cli/args.ts'
import { SchemaTooNewError } from './db/database.ts'
import { loadConfig, SERVE_FLAGS } from './server/config.ts'
import { DataDirError } from './server/context.ts'
import { HarkError } from './server/errors.ts'
import { stderrLogger } from './server/log.ts'
import { StartupError, serve } from './server/serve.ts'
import { VERSION } from './version.ts'

const HELP = `hark ${VERSION} — a message channel between agents and their person

Usage:
  hark serve [flags]      run the server (HTTP API, database, files)
  hark admin ...          operator commands (see: hark admin --help)
  hark --version          print the version

Run "hark serve --help" for the server's flags.`

const SERVE_HELP = `Usage: hark serve [flags]

Flags (each also read from its environment variable; a flag wins):
  --data DIR           data directory (database, files)   HARK_DATA       ./data
  --host H             address to listen on               HARK_HOST       0.0.0.0
  --port N             port to listen on                  HARK_PORT       8080
  --base-url URL       public URL people use              HARK_BASE_URL   http://localhost:PORT
  --write-limit N      agent writes/minute/channel, 0=off HARK_WRITE_LIMIT 120
  --max-file-size S    largest upload (e.g. 25MiB)        HARK_MAX_FILE_SIZE 25MiB`

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  const env = process.env
  const out = (line: string) => process.stdout.write(`${line}\n`)
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      out(HELP)
      return command === undefined ? 2 : 0
    case 'version':
    case '--version':
    case '-v':
      out(VERSION)
      return 0
    case 'serve': {
      if (rest.includes('--help') || rest.includes('-h')) {
        out(SERVE_HELP)
        return 0
      }
      const config = loadConfig(parseArgs(rest, Object.keys(SERVE_FLAGS)), env)
      await serve(config, stderrLogger)
      return 0
    }
    case 'admin':
      if (rest.length === 0 || rest.includes('--help') || rest.includes('-h')) {
        out(ADMIN_HELP)
        return rest.length === 0 ? 2 : 0
      }
      return admin(rest, env, out)
    default:
      throw new UsageError(`unknown command "${command}"\n\n${HELP}`)
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`hark: ${error.message}\n`)
      process.exit(2)
    }
    const known =
      error instanceof HarkError ||
      error instanceof StartupError ||
      error instanceof DataDirError ||
      error instanceof SchemaTooNewError
    process.stderr.write(
      `hark: ${known ? (error as Error).message : ((error as Error)?.stack ?? error)}\n`,
    )
    process.exit(1)
  },
)
