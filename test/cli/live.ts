import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { startSession } from '../../src/access/sessions/service.ts'
import { createPersonClient, type PersonClient } from '../../src/agent/client.ts'
import { type Logger, silentLogger } from '../../src/core/log.ts'
import { addChannel, addPersonToken, addUser } from '../../src/people/service.ts'
import type { UserRow } from '../../src/people/store.ts'
import { type Config, DEFAULTS } from '../../src/server/config.ts'
import { createContext } from '../../src/server/context.ts'
import { type Running, startServer } from '../../src/server/serve.ts'
import { tempDir } from '../harness.ts'

/**
 * A real server on loopback (a real socket, a real data dir) and the CLI as a real process
 * against it, with its own config dir: what an agent on another machine would see.
 */
export interface LiveServer {
  url: string
  dir: string
  running: Running
  /** The first channel's agent token, made like `hark admin channel add`. */
  agentToken: string
  channelId: string
  person: PersonClient
  /** The owner logged in as the web app is (session cookie, app Origin): approves, makes links. */
  browser: PersonClient
  /** Stops the server (answering held long-polls first); the data dir stays. */
  stop(): Promise<void>
  /** Starts again on the same port and data dir, as a restart would. */
  start(): Promise<void>
  /** Stops and removes the data dir. */
  close(): Promise<void>
}

const OWNER = 'owner@example.com'

export async function startLiveServer(
  overrides: Partial<Config> = {},
  options: { log?: Logger } = {},
): Promise<LiveServer> {
  const dir = tempDir('hark-cli-')
  const config: Config = {
    dataDir: dir,
    host: '127.0.0.1',
    port: 0,
    baseUrl: 'http://127.0.0.1',
    writeLimit: 0,
    maxFileSize: DEFAULTS.maxFileSize,
    ...overrides,
  }
  const open = () => {
    const running = startServer(createContext(config, { log: options.log ?? silentLogger }))
    // Port 0 picks a free port; a restart must come back on the same one.
    config.port = running.server.port as number
    config.baseUrl = running.url
    return running
  }
  let running = open()
  addUser(running.ctx, { email: OWNER, owner: true })
  const made = addChannel(running.ctx, { email: OWNER, label: 'Test agent' })
  const personToken = addPersonToken(running.ctx, { email: OWNER }).token
  const owner = running.ctx.store.users.byEmail(OWNER) as UserRow
  const cookie = startSession(running.ctx, owner, 'test-browser').setCookie.split(';')[0] as string
  let stopped = false
  const live: LiveServer = {
    url: running.url,
    dir,
    running,
    agentToken: made.token,
    channelId: made.channel.id,
    person: createPersonClient({ baseUrl: running.url, token: personToken }),
    browser: createPersonClient({ baseUrl: running.url, headers: { cookie, origin: running.url } }),
    async stop() {
      if (!stopped) await running.stop()
      stopped = true
    },
    async start() {
      running = open()
      live.running = running
      stopped = false
    },
    async close() {
      await live.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return live
}

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

/** The environment of a CLI run: none of the tester's own Hark settings leak in. */
function cliEnv(home: string, env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('HARK_') && k !== 'XDG_CONFIG_HOME') base[k] = v
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

export interface Cli {
  /** The home (and, under it, the XDG config dir) of this CLI's runs. */
  home: string
  configFile: string
  /** Runs `hark ...args` to completion. */
  run(
    args: string[],
    options?: { env?: Record<string, string>; stdin?: string; timeoutMs?: number; cwd?: string },
  ): Promise<Ran>
  /** Starts `hark ...args` and returns at once, for waits, follows and pairing. */
  spawn(args: string[], options?: { env?: Record<string, string> }): Spawned
}

export interface Spawned {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
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

/** A CLI with its own home: its config file starts empty. */
export function makeCli(): Cli {
  const home = tempDir('hark-home-')
  const env = (extra: Record<string, string> = {}) => cliEnv(home, extra)
  return {
    home,
    configFile: join(home, 'config', 'hark', 'config.json'),
    async run(args, options = {}) {
      const proc = Bun.spawn([process.execPath, MAIN, ...args], {
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
        stdin: 'ignore',
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
export function connectedEnv(server: LiveServer): Record<string, string> {
  return { HARK_URL: server.url, HARK_TOKEN: server.agentToken }
}

export const removeHome = (cli: Cli) => rmSync(cli.home, { recursive: true, force: true })
