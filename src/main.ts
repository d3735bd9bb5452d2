#!/usr/bin/env bun
import { isAgentCommand } from './cli/agent/names.ts'
import { parseArgs } from './cli/args.ts'
import { FatalError, HarkError, UsageError } from './core/errors.ts'
import { VERSION } from './core/version.ts'

// A lean start: every module imported statically here runs when the binary starts, whatever the
// command, so this file imports only the small ones above. Each command loads its own modules
// when asked for: `hark --version` runs nothing else, `hark hook` only the hook's client side,
// an agent's `hark send` never touches the server's modules (nor the embedded web app).

/**
 * @simplewebauthn/server loads @peculiar/x509, whose tsyringe needs the Reflect metadata API as
 * it loads: polyfilled before the server's (and the admin commands') modules load. In the
 * compiled binary nothing else provides it.
 */
const reflectMetadata = () => import('reflect-metadata')

// Elysia reads this once, when it loads (lazily, below). Outside production it builds every
// validation error's message from the whole received value, pretty-printed: tens of
// milliseconds of the server's one thread for a hostile body, for a message Hark never shows
// (its errors name the field, never the value; src/server/render-error.ts).
process.env.NODE_ENV ??= 'production'

const help = (
  agentCommandsHelp: string,
  globalHelp: string,
) => `hark ${VERSION} — a message channel between agents and their person

Usage:
  hark serve [flags]      run the server (HTTP API, database, files, web app)
  hark admin ...          operator commands (see: hark admin --help)
  hark install claude     approve Claude Code from your phone (also: hark install codex)
  hark hook claude|codex  the command those hooks run (see: hark hook --help)
  hark resume claude ID   resume a headless run that deferred an action, once you answered
  hark --version          print the version

Agent commands (hark help COMMAND for each):
${agentCommandsHelp}

${globalHelp}

Run "hark serve --help" for the server's flags.`

const serveHelp = (settingsHelp: () => string) => `Usage: hark serve [flags]

Settings (flag, environment variable or config-file line, default):
${settingsHelp()}

  --config FILE    config file of NAME=value lines   HARK_CONFIG  /etc/hark/hark.env if it exists
  --print-config   print the effective settings (secrets masked) and exit
  --check          check that the server would start: load the config, open the data and try
                   the schema upgrade on a copy; exit 0 and say so, or 1 and say what is wrong

Precedence: flag > environment variable > config file > default.`

/** `hark serve`'s log gathers lines per turn: written out before a fatal error's own line. */
let flushBeforeExit = () => {}

/** The commands beside the agent's that have a help of their own (`hark X --help`). */
const OWN_HELP = new Set(['serve', 'admin', 'install', 'hook'])

async function topHelp(): Promise<string> {
  const { AGENT_COMMANDS_HELP, GLOBAL_HELP } = await import('./cli/agent/index.ts')
  return help(AGENT_COMMANDS_HELP, GLOBAL_HELP)
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  const env = process.env
  const out = (line: string) => process.stdout.write(`${line}\n`)
  // The agent's commands (init, send, ask, ..., mcp) and their help live in src/cli/agent.
  if (isAgentCommand(command, rest)) {
    const { runAgentCli } = await import('./cli/agent/index.ts')
    return runAgentCli(command as string, rest)
  }
  switch (command) {
    case 'help':
      // `hark help X` is `hark X --help` for every command (the agent's are answered above).
      if (rest[0] !== undefined && OWN_HELP.has(rest[0])) return main([rest[0], '--help'])
      if (rest[0] !== undefined && !['help', 'version'].includes(rest[0])) {
        throw new UsageError(`unknown command "${rest[0]}"\n\n${await topHelp()}`)
      }
      out(await topHelp())
      return 0
    case undefined:
    case '--help':
    case '-h':
      out(await topHelp())
      return command === undefined ? 2 : 0
    case 'version':
    case '--version':
    case '-v':
      out(VERSION)
      return 0
    case 'serve': {
      const { printConfig, resolveConfig, SERVE_BOOLEANS, SERVE_VALUED, settingsHelp } =
        await import('./cli/settings.ts')
      if (rest.includes('--help') || rest.includes('-h')) {
        out(serveHelp(settingsHelp))
        return 0
      }
      const args = parseArgs(rest, SERVE_VALUED, SERVE_BOOLEANS)
      if (args.positionals.length > 0) {
        throw new UsageError(`hark serve takes no arguments (got "${args.positionals[0]}")`)
      }
      const resolved = resolveConfig(args, env)
      if (args.flags.has('print-config')) {
        out(printConfig(resolved))
        return 0
      }
      await reflectMetadata()
      if (args.flags.has('check')) {
        const { checkServe } = await import('./server/check.ts')
        // Opening the database makes its -shm and -wal files: root's would lock the service out.
        const { refuseForeignRoot } = await import('./cli/admin/command.ts')
        refuseForeignRoot(resolved.config.dataDir, 'hark serve --check ...')
        let lines: string[]
        try {
          lines = await checkServe(resolved.config, resolved.file)
        } catch (error) {
          throw new FatalError(`serve --check failed: ${(error as Error).message}`)
        }
        out(`hark ${VERSION} would start (serve --check):`)
        for (const line of lines) out(`  ${line}`)
        return 0
      }
      const { serve } = await import('./server/serve.ts')
      const { flushLog, jsonLogger, stderrLogger } = await import('./core/log.ts')
      flushBeforeExit = flushLog
      await serve(resolved.config, resolved.config.logFormat === 'json' ? jsonLogger : stderrLogger)
      return 0
    }
    case 'hook': {
      // Always 0: in Claude Code's hook protocol exit 2 means "block" (src/cli/harness/hook.ts).
      const { runHook } = await import('./cli/harness/hook.ts')
      return runHook(rest, env)
    }
    case 'resume': {
      const { runResume } = await import('./cli/harness/resume.ts')
      return runResume(rest, env)
    }
    case 'install': {
      const { runInstall } = await import('./cli/harness/install.ts')
      return runInstall(rest, env)
    }
    case 'admin': {
      await reflectMetadata()
      const { ADMIN_HELP, admin } = await import('./cli/admin/index.ts')
      if (rest.length === 0 || rest.includes('--help') || rest.includes('-h')) {
        out(ADMIN_HELP)
        return rest.length === 0 ? 2 : 0
      }
      return await admin(rest, env, out)
    }
    default:
      throw new UsageError(`unknown command "${command}"\n\n${await topHelp()}`)
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    flushBeforeExit()
    if (error instanceof UsageError) {
      process.stderr.write(`hark: ${error.message}\n`)
      process.exit(2)
    }
    const known = error instanceof HarkError || error instanceof FatalError
    process.stderr.write(
      `hark: ${known ? (error as Error).message : ((error as Error)?.stack ?? error)}\n`,
    )
    process.exit(1)
  },
)
