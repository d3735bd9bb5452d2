import { afterAll, beforeAll } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { startTestServer, type TestServer, type TestServerOptions, tempDir } from '../harness.ts'

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

/** The environment of a CLI run: none of the tester's own Hark settings leak in. */
function cliEnv(home: string, env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('HARK_') && !k.startsWith('XDG_')) base[k] = v
  }
  return { ...base, HOME: home, XDG_CONFIG_HOME: join(home, 'config'), ...env }
}

export interface Ran {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as one JSON document. */
  json<T = Record<string, unknown>>(): T
}

export interface RunOptions {
  env?: Record<string, string>
  stdin?: string
  timeoutMs?: number
  cwd?: string
  /** File modes bind the process as they bind any user (see `UNPRIVILEGED`). */
  unprivileged?: boolean
}

export interface Cli {
  /** The home (and, under it, the XDG config dir) of this CLI's runs. */
  home: string
  configFile: string
  /** Runs `hark ...args` to completion. */
  run(args: string[], options?: RunOptions): Promise<Ran>
  /**
   * Starts `hark ...args` and returns at once, for waits, follows and pairing. With `stdin:
   * 'pipe'` its stdin is a pipe this side holds open, as agent harnesses spawn commands.
   */
  spawn(args: string[], options?: { env?: Record<string, string>; stdin?: 'pipe' }): Spawned
}

export interface Spawned {
  proc: Subprocess<'ignore' | 'pipe', 'pipe', 'pipe'>
  /** Resolves once stderr matches, with the match. */
  stderrMatch(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>
  /** Resolves with the next complete stdout line. */
  nextLine(timeoutMs?: number): Promise<string>
  finished(): Promise<Ran>
}

function ran(code: number, stdout: string, stderr: string): Ran {
  return {
    code,
    stdout,
    stderr,
    json<T>() {
      try {
        return JSON.parse(stdout) as T
      } catch {
        throw new Error(`stdout is not one JSON document:\n${stdout}\nstderr:\n${stderr}`)
      }
    },
  }
}

/**
 * What runs the CLI so that a file's mode stops it: root passes every mode bit, and test boxes
 * often run as root, so there it runs without the capabilities that do that (setpriv, from
 * util-linux). It stays uid 0, so it still reads its own home.
 */
const UNPRIVILEGED =
  process.getuid?.() === 0
    ? ['setpriv', '--bounding-set=-dac_override,-dac_read_search,-fowner', '--']
    : []

/** A CLI with its own home: its config file starts empty. */
export function makeCli(): Cli {
  const home = tempDir('hark-home-')
  const env = (extra: Record<string, string> = {}) => cliEnv(home, extra)
  return {
    home,
    configFile: join(home, 'config', 'hark', 'config.json'),
    async run(args, options = {}) {
      const prefix = options.unprivileged ? UNPRIVILEGED : []
      const proc = Bun.spawn([...prefix, process.execPath, MAIN, ...args], {
        env: env(options.env),
        cwd: options.cwd,
        stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
        stdout: 'pipe',
        stderr: 'pipe',
        timeout: options.timeoutMs ?? 20_000,
      })
      const [stdout, stderr, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ])
      return ran(code, stdout, stderr)
    },
    spawn(args, options = {}) {
      const proc = Bun.spawn([process.execPath, MAIN, ...args], {
        env: env(options.env),
        stdin: options.stdin ?? 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      let stdout = ''
      let stderr = ''
      const decoder = new TextDecoder()
      const drained = Promise.all([
        (async () => {
          for await (const c of proc.stdout) stdout += decoder.decode(c)
        })(),
        (async () => {
          for await (const c of proc.stderr) stderr += decoder.decode(c)
        })(),
      ])
      let consumed = 0
      const until = async <T>(find: () => T | undefined, what: string, timeoutMs: number) => {
        const deadline = Date.now() + timeoutMs
        while (Date.now() < deadline) {
          const found = find()
          if (found !== undefined) return found
          await Bun.sleep(20)
        }
        throw new Error(`timed out waiting for ${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`)
      }
      return {
        proc,
        stderrMatch: (pattern, timeoutMs = 10_000) =>
          until(() => pattern.exec(stderr) ?? undefined, `stderr ${pattern}`, timeoutMs),
        nextLine: (timeoutMs = 10_000) =>
          until(
            () => {
              const end = stdout.indexOf('\n', consumed)
              if (end === -1) return undefined
              const line = stdout.slice(consumed, end)
              consumed = end + 1
              return line
            },
            'a stdout line',
            timeoutMs,
          ),
        async finished() {
          const code = await proc.exited
          await drained
          return ran(code, stdout, stderr)
        },
      }
    },
  }
}

/** A CLI already connected to `server`'s first channel through HARK_URL and HARK_TOKEN. */
export function connectedEnv(server: TestServer): Record<string, string> {
  return { HARK_URL: server.url, HARK_TOKEN: server.agentToken }
}

export const removeHome = (cli: Cli) => rmSync(cli.home, { recursive: true, force: true })

/**
 * The test server on a real loopback socket and the CLI as a real process against it, with its
 * own home: what an agent on another machine would see. `env` connects it to the first channel.
 */
export interface LiveCli {
  server: TestServer
  cli: Cli
  env: Record<string, string>
  /** Stops the server, removes its data and the CLI's home. */
  close(): Promise<void>
}

export async function startLiveCli(options: TestServerOptions = {}): Promise<LiveCli> {
  const server = await startTestServer({ listen: true, ...options })
  const cli = makeCli()
  return {
    server,
    cli,
    env: connectedEnv(server),
    async close() {
      await server.close()
      removeHome(cli)
    },
  }
}

/** A `LiveCli` for all the tests of a file: started before them, closed after them. */
export function liveCli(options: TestServerOptions = {}): LiveCli {
  let live: LiveCli | undefined
  beforeAll(async () => {
    live = await startLiveCli(options)
  })
  afterAll(() => live?.close())
  const started = () => {
    if (!live) throw new Error('the live server starts in beforeAll')
    return live
  }
  return {
    get server() {
      return started().server
    },
    get cli() {
      return started().cli
    },
    get env() {
      return started().env
    },
    close: () => started().close(),
  }
}
